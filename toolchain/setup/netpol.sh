# shellcheck shell=bash
# Sourced by toolchain/setup.sh: the local node's NetworkPolicy enforcer (`setup.sh netpol`): kube-router's network
# policy controller (iptables and ipset; the policies' default deny and proxy-only rules hold on the node), built
# from github.com/cloudnativelabs/kube-router/v2 at KUBE_ROUTER_VERSION and cached. The module proxy serves only
# that version. Its three published advisories are in its service proxy and BGP router, which the node never runs
# (--run-service-proxy=false --run-router=false); its dependencies with advisories at that version (x/net,
# protobuf, grpc, oauth2) are raised here, and the wrapper module's `go 1.26` drops the old TLS defaults its own
# go.mod would keep. sigs.k8s.io/kube-network-policies needs the nftables queue expression, which kernels without
# CONFIG_NFT_QUEUE refuse; Calico's felix cannot be built from the proxy.

kube_router_bin="$(cached_bin_dir "$KUBE_ROUTER_CACHE_FOLDER" "$KUBE_ROUTER_VERSION")/kube-router"

build_kube_router() {
  local dir t
  new_workdir
  t="$(now)"
  say "building kube-router v$KUBE_ROUTER_VERSION (network policy controller) from the Go module proxy (a few minutes; cached afterwards)..."
  (
    cd "$dir" || exit 1
    printf 'module sandbox-projects.local/kube-router-build\n\ngo 1.26\n' >go.mod
    printf '//go:build tools\n\npackage build\n\nimport _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"\n' >tools.go
    "$go" get "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@v$KUBE_ROUTER_VERSION" \
      golang.org/x/net@v0.62.0 golang.org/x/oauth2@v0.38.0 google.golang.org/protobuf@v1.36.12 \
      google.golang.org/grpc@v1.79.3 || exit 1
    mkdir -p out || exit 1
    "$go" build -trimpath \
      -ldflags "-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=v$KUBE_ROUTER_VERSION" \
      -o out/kube-router github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
  ) >&2 || return 1
  install_bin "$dir/out/kube-router" "$kube_router_bin"
  say "built kube-router ($(size_of "$kube_router_bin")) in $(elapsed "$t")"
}

locked_build_kube_router() {
  [ -x "$kube_router_bin" ] && return 0
  find_go && build_kube_router
}

ensure_netpol() {
  if [ -x "$kube_router_bin" ]; then
    say "kube-router: v$KUBE_ROUTER_VERSION cached ($kube_router_bin)"
    return 0
  fi
  if with_lock kube-router locked_build_kube_router; then return 0; fi
  missing+=("kube-router v$KUBE_ROUTER_VERSION (the node's NetworkPolicy enforcer): the build failed (see above)")
}
