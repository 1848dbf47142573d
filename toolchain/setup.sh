#!/usr/bin/env bash
# The toolchain set-up: makes sure the Pulumi engine and the local Kubernetes control plane the engine tests use are
# on this machine. Idempotent: what is on PATH (recent enough) or already cached is used as it is; what is missing is
# built from the Go module proxy (or installed from Debian, for etcd) and cached by version in a per-user folder, so
# the next run skips the build.
#
#   toolchain/setup.sh                 everything: pulumi, the kubernetes plugin, etcd, kube-apiserver/controller-manager
#   toolchain/setup.sh pulumi ...      only the named parts (pulumi, kubernetes-plugin, etcd, kube)
#   toolchain/setup.sh --print-path    print the PATH entries of the cached tools (one per line) and exit
#
# It downloads nothing but Go modules (through `go`, so GOPROXY applies) and Debian packages (apt-get).
# The cache: ${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects/<tool>/v<version>/bin/<binary>.
# Exit status: 0 when every requested part is there, 3 when something is missing (the message names it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects"

# Keep these in step with toolchain/pulumi.ts (PULUMI_VERSION, MIN_PULUMI_VERSION) and test/engine/toolchain.ts.
PULUMI_VERSION="3.274.1"
MIN_PULUMI_VERSION="3.200.0"
# @pulumi/kubernetes 4.25.0 (package.json) pairs with the provider module's 4.25.0 release, which the proxy serves
# only as this pseudo-version; its go.mod points sdk/v4 at a local folder, so the published sdk/v4 stands in.
K8S_PLUGIN_VERSION="4.25.0"
K8S_PLUGIN_MODULE_VERSION="v4.0.0-20260115033456-f47bc2d6f199"
K8S_PLUGIN_SDK_VERSION="v4.24.0"
KUBE_VERSION="1.36.3"
KUBE_STAGING_VERSION="0.36.3"
# k8s.io/kubernetes v1.36.3 says `go 1.26.0`; a dependency of the Pulumi CLI asks for 1.26.6.
MIN_GO_VERSION="1.26.6"

pulumi_bin="$cache/pulumi/v$PULUMI_VERSION/bin/pulumi"
k8s_plugin_bin="$cache/pulumi-resource-kubernetes/v$K8S_PLUGIN_VERSION/bin/pulumi-resource-kubernetes"
kube_dir="$cache/kubernetes/v$KUBE_VERSION/bin"

missing=()

say() { printf 'setup: %s\n' "$*" >&2; }
now() { date +%s; }
elapsed() { printf '%ss' "$(($(now) - $1))"; }
size_of() { du -h "$1" | cut -f1; }

# version_ge A B: true when dotted version A >= B.
version_ge() {
  [ "$(printf '%s\n%s\n' "${1#v}" "${2#v}" | sort -V | head -n1)" = "${2#v}" ]
}

# The Go toolchain: `go` on PATH, else the standard install location. Sets $go; false (with a message) when there
# is none, or it is older than the Kubernetes modules need.
go=""
find_go() {
  [ -n "$go" ] && return 0
  local candidate
  candidate="$(command -v go || true)"
  [ -z "$candidate" ] && [ -x /usr/local/go/bin/go ] && candidate=/usr/local/go/bin/go
  if [ -z "$candidate" ]; then
    say "no Go toolchain: install Go $MIN_GO_VERSION or later (https://go.dev/doc/install) and put \`go\` on PATH."
    return 1
  fi
  local v
  v="$("$candidate" env GOVERSION 2>/dev/null || true)"
  v="${v#go}"
  if [ -z "$v" ] || ! version_ge "$v" "$MIN_GO_VERSION"; then
    say "$candidate is Go ${v:-of an unknown version}; the builds need Go $MIN_GO_VERSION or later."
    return 1
  fi
  go="$candidate"
  # Never switch toolchains behind the user's back; never fall back to a VCS host: modules come through the proxy
  # only (GOPROXY's trailing `direct` is dropped; a proxy that refuses a module is an error that names it).
  local proxy
  proxy="$("$candidate" env GOPROXY)"
  case "$proxy" in
    *,direct | *"|direct") export GOPROXY="${proxy%[,|]direct}" ;;
  esac
  export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0
  say "using $go (go$v, GOPROXY=$("$go" env GOPROXY))"
}

# A throwaway build folder, removed on exit.
workdirs=()
cleanup() {
  local d
  for d in "${workdirs[@]+"${workdirs[@]}"}"; do
    chmod -R u+w "$d" 2>/dev/null || true
    rm -rf "$d"
  done
}
trap cleanup EXIT
# new_workdir: sets $dir to a fresh folder (not through $(...): the list must grow in this shell).
new_workdir() {
  dir="$(mktemp -d "${TMPDIR:-/tmp}/sandbox-projects-build.XXXXXX")"
  workdirs+=("$dir")
}

# module_field MODULE@VERSION FIELD: downloads a module through the proxy and prints one field of `go mod download
# -json` (Dir, GoMod); on failure prints the proxy's error and returns 1.
module_field() {
  local json value
  json="$("$go" mod download -json "$1" 2>&1 || true)"
  value="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"'"$2"'": "\(.*\)",\{0,1\}$/\1/p' | head -n1)"
  if [ -z "$value" ] || [ ! -e "$value" ]; then
    printf 'cannot download %s: %s\n' "$1" \
      "$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' | head -n1)" >&2
    return 1
  fi
  printf '%s\n' "$value"
}

# shellcheck source=toolchain/lock.sh
. "$(dirname "${BASH_SOURCE[0]}")/lock.sh"

# install_bin SRC DEST: moves a fresh build into the cache atomically.
install_bin() {
  mkdir -p "$(dirname "$2")"
  install -m 0755 "$1" "$2.partial"
  mv -f "$2.partial" "$2"
}

# ---------------------------------------------------------------------------------------------------------------------
# The Pulumi CLI
# ---------------------------------------------------------------------------------------------------------------------
pulumi_version_of() { "$1" version 2>/dev/null | head -n1 | tr -d '[:space:]' | sed 's/^v//'; }

build_pulumi() {
  local dir t
  new_workdir
  t="$(now)"
  say "building the Pulumi CLI v$PULUMI_VERSION from the Go module proxy (several minutes; cached afterwards)..."
  (
    cd "$dir" || exit 1
    cat >go.mod <<EOF
module sandbox-projects.local/pulumi-build

go 1.26.0

require (
	github.com/pulumi/pulumi/pkg/v3 v$PULUMI_VERSION
	github.com/pulumi/pulumi/sdk/v3 v$PULUMI_VERSION
)

// The one replace of pkg/v3's go.mod that does not point at a local folder.
replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e
EOF
    "$go" get "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v$PULUMI_VERSION" || exit 1
    "$go" build -trimpath -tags osusergo,grpcnotrace \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION" \
      -o "$dir/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  ) >&2 || return 1
  install_bin "$dir/pulumi" "$pulumi_bin"
  say "built $pulumi_bin in $(elapsed "$t") ($(size_of "$pulumi_bin"))"
}

pulumi_cached() { [ -x "$pulumi_bin" ] && [ "$(pulumi_version_of "$pulumi_bin")" = "$PULUMI_VERSION" ]; }

locked_build_pulumi() {
  if pulumi_cached; then
    say "pulumi: v$PULUMI_VERSION built by the set-up this one waited for ($pulumi_bin)"
    return 0
  fi
  find_go && build_pulumi
}

ensure_pulumi() {
  local found v
  found="$(command -v pulumi || true)"
  if [ -n "$found" ] && [ "$found" != "$pulumi_bin" ]; then
    v="$(pulumi_version_of "$found")"
    if [ -n "$v" ] && version_ge "$v" "$MIN_PULUMI_VERSION"; then
      say "pulumi: v$v on PATH ($found)"
      return 0
    fi
    say "pulumi on PATH ($found) is ${v:+v}${v:-not runnable}; the toolkit needs v$MIN_PULUMI_VERSION or later: using the cache"
  fi
  if pulumi_cached; then
    say "pulumi: v$PULUMI_VERSION cached ($pulumi_bin)"
    return 0
  fi
  if with_lock pulumi locked_build_pulumi; then return 0; fi
  missing+=("the Pulumi CLI v$PULUMI_VERSION: the build from github.com/pulumi/pulumi/pkg/v3 failed (see above); install the official CLI (https://www.pulumi.com/docs/install/) or make the Go module proxy reachable")
}

# ---------------------------------------------------------------------------------------------------------------------
# The Kubernetes resource plugin (pulumi-resource-kubernetes)
# ---------------------------------------------------------------------------------------------------------------------
build_kubernetes_plugin() {
  local dir t src
  new_workdir
  t="$(now)"
  say "building pulumi-resource-kubernetes v$K8S_PLUGIN_VERSION from the Go module proxy (several minutes; cached afterwards)..."
  (
    module="github.com/pulumi/pulumi-kubernetes/provider/v4@$K8S_PLUGIN_MODULE_VERSION"
    src="$(module_field "$module" Dir)" || exit 1
    # The module cache is read-only, and generate.go writes next to main.go: build from a writable copy.
    cp -R "$src" "$dir/provider" && chmod -R u+w "$dir/provider" && cd "$dir/provider" || exit 1
    # go.mod points sdk/v4 at ../sdk (a folder of the repository, not in the module): use the published sdk/v4.
    "$go" mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4 \
      -require "github.com/pulumi/pulumi-kubernetes/sdk/v4@$K8S_PLUGIN_SDK_VERSION" || exit 1
    "$go" mod download github.com/pulumi/pulumi-kubernetes/sdk/v4 || exit 1
    # cmd/pulumi-resource-kubernetes embeds schema-embed.json, which its own generate.go writes from schema.json.
    (cd cmd/pulumi-resource-kubernetes && VERSION="$K8S_PLUGIN_VERSION" "$go" run generate.go) || exit 1
    "$go" build -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$K8S_PLUGIN_VERSION" \
      -o "$dir/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
  ) >&2 || return 1
  install_bin "$dir/pulumi-resource-kubernetes" "$k8s_plugin_bin"
  say "built $k8s_plugin_bin in $(elapsed "$t") ($(size_of "$k8s_plugin_bin"))"
}

# Installs the cached plugin into the project's Pulumi home (as `pulumi plugin install --file` would, without the
# CLI), so the engine finds it for @pulumi/kubernetes $K8S_PLUGIN_VERSION without PATH changes and never downloads.
link_kubernetes_plugin() {
  local home="${PULUMI_HOME:-$root/.sandbox/pulumi-home}"
  local dest="$home/plugins/resource-kubernetes-v$K8S_PLUGIN_VERSION"
  mkdir -p "$dest"
  ln -sfn "$k8s_plugin_bin" "$dest/pulumi-resource-kubernetes"
  rm -f "$dest.partial"
  : >"$dest.lock"
}

locked_build_kubernetes_plugin() {
  [ -x "$k8s_plugin_bin" ] && return 0
  find_go && build_kubernetes_plugin
}

ensure_kubernetes_plugin() {
  if [ -x "$k8s_plugin_bin" ]; then
    say "pulumi-resource-kubernetes: v$K8S_PLUGIN_VERSION cached ($k8s_plugin_bin)"
  elif ! with_lock kubernetes-plugin locked_build_kubernetes_plugin; then
    missing+=("the Pulumi kubernetes resource plugin v$K8S_PLUGIN_VERSION: the build from github.com/pulumi/pulumi-kubernetes/provider/v4@$K8S_PLUGIN_MODULE_VERSION failed (see above)")
    return 0
  fi
  # Per Pulumi home (one per checkout unless PULUMI_HOME says otherwise), not per machine.
  with_lock "pulumi-home-$(printf '%s' "${PULUMI_HOME:-$root/.sandbox/pulumi-home}" | cksum | cut -d' ' -f1)" \
    link_kubernetes_plugin
}

# ---------------------------------------------------------------------------------------------------------------------
# etcd (Debian's etcd-server): the store of the local API server
# ---------------------------------------------------------------------------------------------------------------------
ensure_etcd() {
  local found
  found="$(command -v etcd || true)"
  if [ -n "$found" ]; then
    say "etcd: $("$found" --version 2>/dev/null | head -n1) ($found)"
    return 0
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      missing+=("etcd: not on PATH; install Debian's etcd-server as root (apt-get install -y etcd-server)")
      return 0
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    missing+=("etcd: not on PATH and no apt-get here; install etcd 3.4 or later and put \`etcd\` on PATH")
    return 0
  fi
  with_lock etcd install_etcd "$sudo"
}

install_etcd() {
  local sudo="$1" t
  if command -v etcd >/dev/null 2>&1; then return 0; fi
  t="$(now)"
  say "installing etcd from Debian (apt-get install -y etcd-server)..."
  # The package would start a system etcd on the default ports: the tests start their own, so keep it off.
  if $sudo env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y --no-install-recommends etcd-server >&2 \
    || { $sudo apt-get update >&2 && $sudo env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 \
      apt-get install -y --no-install-recommends etcd-server >&2; }; then
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
      $sudo systemctl disable --now etcd >&2 || true
    fi
    say "etcd: $(etcd --version 2>/dev/null | head -n1) installed in $(elapsed "$t")"
  else
    missing+=("etcd: apt-get install etcd-server failed (see above); Debian's package archive must be reachable")
  fi
}

# ---------------------------------------------------------------------------------------------------------------------
# kube-apiserver and kube-controller-manager, from k8s.io/kubernetes
# ---------------------------------------------------------------------------------------------------------------------
build_kube() {
  local dir t
  new_workdir
  t="$(now)"
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
      sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) => ./staging/.*#replace \1 => \1 v'"$KUBE_STAGING_VERSION"'#p' "$gomod"
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

# ---------------------------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------------------------
main() {
  if [ "${1:-}" = "--print-path" ]; then
    printf '%s\n' "$(dirname "$pulumi_bin")" "$(dirname "$k8s_plugin_bin")" "$kube_dir"
    return 0
  fi
  local parts=("$@") part started m
  [ "${#parts[@]}" -eq 0 ] && parts=(pulumi kubernetes-plugin etcd kube)
  started="$(now)"
  # No set-up-wide lock: each build holds only its own tool's lock (with_lock), so a cached tool never waits.
  mkdir -p "$cache"
  for part in "${parts[@]}"; do
    case "$part" in
      pulumi) ensure_pulumi ;;
      kubernetes-plugin) ensure_kubernetes_plugin ;;
      etcd) ensure_etcd ;;
      kube) ensure_kube ;;
      *)
        say "unknown part '$part' (expected: pulumi, kubernetes-plugin, etcd, kube)"
        return 2
        ;;
    esac
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    say "the toolchain is incomplete after $(elapsed "$started"):"
    for m in "${missing[@]}"; do say "  missing: $m"; done
    return 3
  fi
  say "toolchain ready in $(elapsed "$started") (cache: $cache)"
}

# One line, so that bash has read the whole file before anything runs (editing it during a build is then harmless).
main "$@"; exit
