#!/usr/bin/env bash
# The toolchain set-up: makes sure the Pulumi engine and the local Kubernetes control plane the engine tests use are
# on this machine. Idempotent: what is on PATH (recent enough) or already cached is used as it is; what is missing is
# built from the Go module proxy (or installed from Debian, for etcd) and cached by version in a per-user folder, so
# the next run skips the build.
#
#   toolchain/setup.sh                 everything: pulumi, the kubernetes plugin, etcd, the kube binaries, the node's
#                                      host pieces (containerd, runc, CNI plugins, pause), kube-router
#   toolchain/setup.sh pulumi ...      only the named parts (pulumi, kubernetes-plugin, etcd, kube, node, netpol, runsc,
#                                      kwok: the scale benchmark's simulated nodes, built only when asked for)
#   toolchain/setup.sh --print-path    print the PATH entries of the cached tools (one per line) and exit
#
# It downloads nothing but Go modules (through `go`, so GOPROXY applies) and Debian packages (apt-get).
# The versions and the cache layout are the manifest's (toolchain/versions.env):
# ${XDG_CACHE_HOME:-$HOME/.cache}/<CACHE_FOLDER>/<tool folder>/v<version>/bin/<binary>.
# Each part is a file of toolchain/setup/ (pulumi.sh, kubernetes-plugin.sh, etcd.sh, kube.sh); common.sh and go.sh
# hold what they share, and toolchain/lock.sh the per-tool locks.
# Exit status: 0 when every requested part is there, 3 when something is missing (the message names it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
here="$root/toolchain"

# Bash reads a sourced file whole before it runs it: editing these during a build is harmless.
# shellcheck source=toolchain/manifest.sh
. "$here/manifest.sh"
# shellcheck source=toolchain/lock.sh
. "$here/lock.sh"
# shellcheck source=toolchain/setup/common.sh
. "$here/setup/common.sh"
# shellcheck source=toolchain/setup/go.sh
. "$here/setup/go.sh"
# shellcheck source=toolchain/setup/pulumi.sh
. "$here/setup/pulumi.sh"
# shellcheck source=toolchain/setup/kubernetes-plugin.sh
. "$here/setup/kubernetes-plugin.sh"
# shellcheck source=toolchain/setup/etcd.sh
. "$here/setup/etcd.sh"
# shellcheck source=toolchain/setup/kube.sh
. "$here/setup/kube.sh"
# shellcheck source=toolchain/setup/node.sh
. "$here/setup/node.sh"
# shellcheck source=toolchain/setup/netpol.sh
. "$here/setup/netpol.sh"
# shellcheck source=toolchain/setup/runsc.sh
. "$here/setup/runsc.sh"
# shellcheck source=toolchain/setup/kwok.sh
. "$here/setup/kwok.sh"

main() {
  if [ "${1:-}" = "--print-path" ]; then
    printf '%s\n' "$(dirname "$pulumi_bin")" "$(dirname "$k8s_plugin_bin")" "$kube_dir" "$runsc_dir"
    return 0
  fi
  local parts=("$@") part started m
  [ "${#parts[@]}" -eq 0 ] && parts=(pulumi kubernetes-plugin etcd kube node netpol)
  started="$(now)"
  # No set-up-wide lock: each build holds only its own tool's lock (with_lock), so a cached tool never waits.
  mkdir -p "$cache"
  for part in "${parts[@]}"; do
    case "$part" in
      pulumi) ensure_pulumi ;;
      kubernetes-plugin) ensure_kubernetes_plugin ;;
      etcd) ensure_etcd ;;
      kube) ensure_kube ;;
      node) ensure_node ;;
      netpol) ensure_netpol ;;
      runsc) ensure_runsc ;;
      kwok) ensure_kwok ;;
      *)
        say "unknown part '$part' (expected: pulumi, kubernetes-plugin, etcd, kube, node, netpol, runsc, kwok)"
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
