# shellcheck shell=bash
# Sourced by toolchain/setup.sh: the local cluster of the engine tests (`setup.sh kube`): the control plane
# (kube-apiserver, kube-controller-manager, kube-scheduler) and the node's own (kubelet, kube-proxy), KUBE_VERSION
# built from k8s.io/kubernetes in one `go build` (they share most packages) and cached.

kube_dir="$(cached_bin_dir "$KUBE_CACHE_FOLDER" "$KUBE_VERSION")"
KUBE_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

kube_cached() {
  local c
  for c in "${KUBE_COMMANDS[@]}"; do [ -x "$kube_dir/$c" ] || return 1; done
}

build_kube() {
  local dir t staging
  new_workdir
  t="$(now)"
  # k8s.io/kubernetes v1.X.Y publishes its staging modules (k8s.io/api, k8s.io/client-go, ...) as v0.X.Y.
  staging="0.${KUBE_VERSION#*.}"
  say "building ${KUBE_COMMANDS[*]} v$KUBE_VERSION from the Go module proxy (several minutes; cached afterwards)..."
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
    pkgs=()
    for c in "${KUBE_COMMANDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
    gets=()
    for p in "${pkgs[@]}"; do gets+=("$p@v$KUBE_VERSION"); done
    "$go" get "${gets[@]}" || exit 1
    v="k8s.io/component-base/version"
    ldflags="-s -w -X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=${KUBE_VERSION%%.*}"
    minor="${KUBE_VERSION#*.}"
    ldflags="$ldflags -X $v.gitMinor=${minor%%.*} -X $v.gitTreeState=clean"
    ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=v$KUBE_VERSION"
    mkdir -p out || exit 1
    "$go" build -trimpath -ldflags "$ldflags" -o out/ "${pkgs[@]}"
  ) >&2 || return 1
  local c sizes=()
  # kube-apiserver last: its presence alone is what older set-ups checked.
  for c in "${KUBE_COMMANDS[@]:1}" kube-apiserver; do
    install_bin "$dir/out/$c" "$kube_dir/$c"
    sizes+=("$c $(size_of "$kube_dir/$c")")
  done
  say "built $(IFS=,; echo "${sizes[*]}") in $(elapsed "$t")"
}

locked_build_kube() {
  kube_cached && return 0
  find_go && build_kube
}

ensure_kube() {
  if kube_cached; then
    say "${KUBE_COMMANDS[*]}: v$KUBE_VERSION cached ($kube_dir)"
    return 0
  fi
  if with_lock kube locked_build_kube; then return 0; fi
  missing+=("${KUBE_COMMANDS[*]} v$KUBE_VERSION: the build from k8s.io/kubernetes@v$KUBE_VERSION failed (see above)")
}
