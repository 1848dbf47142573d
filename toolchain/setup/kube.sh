# shellcheck shell=bash
# Sourced by toolchain/setup.sh: kube-apiserver and kube-controller-manager for the engine tests (`setup.sh kube`),
# KUBE_VERSION built from k8s.io/kubernetes and cached.

kube_dir="$(cached_bin_dir "$KUBE_CACHE_FOLDER" "$KUBE_VERSION")"

build_kube() {
  local dir t staging
  new_workdir
  t="$(now)"
  # k8s.io/kubernetes v1.X.Y publishes its staging modules (k8s.io/api, k8s.io/client-go, ...) as v0.X.Y.
  staging="0.${KUBE_VERSION#*.}"
  say "building kube-apiserver and kube-controller-manager v$KUBE_VERSION from the Go module proxy (several minutes; cached afterwards)..."
  (
    gomod="$(module_field "k8s.io/kubernetes@v$KUBE_VERSION" GoMod)" || exit 1
    cd "$dir" || exit 1
    {
      echo "module sandbox-projects.local/kube-build"
      echo
      grep -E '^(go|godebug) ' "$gomod"
      echo
      echo "require k8s.io/kubernetes v$KUBE_VERSION"
      echo
      echo "// k8s.io/kubernetes replaces its staging modules with folders of its repository: use the published ones."
      sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) => ./staging/.*#replace \1 => \1 v'"$staging"'#p' "$gomod"
    } >go.mod
    grep -q '^replace ' go.mod || { echo "no staging replaces found in $gomod" >&2; exit 1; }
    "$go" get "k8s.io/kubernetes/cmd/kube-apiserver@v$KUBE_VERSION" \
      "k8s.io/kubernetes/cmd/kube-controller-manager@v$KUBE_VERSION" || exit 1
    v="k8s.io/component-base/version"
    ldflags="-s -w -X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=${KUBE_VERSION%%.*}"
    minor="${KUBE_VERSION#*.}"
    ldflags="$ldflags -X $v.gitMinor=${minor%%.*} -X $v.gitTreeState=clean"
    ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=v$KUBE_VERSION"
    mkdir -p out || exit 1
    "$go" build -trimpath -ldflags "$ldflags" -o out/ \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
  ) >&2 || return 1
  install_bin "$dir/out/kube-controller-manager" "$kube_dir/kube-controller-manager"
  install_bin "$dir/out/kube-apiserver" "$kube_dir/kube-apiserver"
  say "built kube-apiserver ($(size_of "$kube_dir/kube-apiserver")) and kube-controller-manager ($(size_of "$kube_dir/kube-controller-manager")) in $(elapsed "$t")"
}

locked_build_kube() {
  [ -x "$kube_dir/kube-apiserver" ] && [ -x "$kube_dir/kube-controller-manager" ] && return 0
  find_go && build_kube
}

ensure_kube() {
  if [ -x "$kube_dir/kube-apiserver" ] && [ -x "$kube_dir/kube-controller-manager" ]; then
    say "kube-apiserver, kube-controller-manager: v$KUBE_VERSION cached ($kube_dir)"
    return 0
  fi
  if with_lock kube locked_build_kube; then return 0; fi
  missing+=("kube-apiserver and kube-controller-manager v$KUBE_VERSION: the build from k8s.io/kubernetes@v$KUBE_VERSION failed (see above)")
}
