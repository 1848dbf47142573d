# shellcheck shell=bash
# Sourced by toolchain/setup.sh: what a local Kubernetes node needs besides kubelet and kube-proxy (`setup.sh node`):
# Debian's containerd (its CRI plugin is the kubelet's runtime), runc, the CNI plugins (bridge, host-local,
# loopback, firewall, portmap), iptables, ipset and conntrack, and the pod sandbox's `pause` binary, compiled from
# the C source k8s.io/kubernetes@KUBE_VERSION ships (build/pause/linux/pause.c) and cached beside the kube binaries.
# No image is pulled: the engine tests make the pause image from that binary and load it into the node's containerd.

NODE_PACKAGES=(containerd runc containernetworking-plugins iptables ipset conntrack)
# The CNI plugins' folder in Debian's package.
CNI_BIN_DIR=/usr/lib/cni

node_packages_missing() {
  local p out=()
  for p in "${NODE_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out+=("$p")
  done
  [ -x "$CNI_BIN_DIR/bridge" ] || out+=(containernetworking-plugins)
  printf '%s\n' "${out[@]+"${out[@]}"}" | sort -u | sed '/^$/d'
}

install_node_packages() {
  local need
  mapfile -t need < <(node_packages_missing)
  [ "${#need[@]}" -eq 0 ] && return 0
  local t
  t="$(now)"
  say "installing the node's packages from Debian: ${need[*]}..."
  # Debian's containerd package would start a system containerd: the tests start their own, so keep it off.
  if env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 \
    || { apt-get update -qq >&2 && env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 \
      apt-get install -y -qq --no-install-recommends "${need[@]}" >&2; }; then
    say "node packages installed in $(elapsed "$t")"
  else
    return 1
  fi
}

# The pause binary: the pod sandbox's one process (it holds the pod's namespaces and reaps orphans).
build_pause() {
  [ -x "$kube_dir/pause" ] && return 0
  local src t
  t="$(now)"
  if ! command -v gcc >/dev/null 2>&1 || ! compgen -G '/usr/lib/*-linux-gnu/libc.a' >/dev/null; then
    say "installing gcc and libc6-dev from Debian (to compile the pod sandbox's pause binary)..."
    env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev >&2 \
      || { apt-get update -qq >&2 && env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends gcc libc6-dev >&2; } || return 1
  fi
  find_go || return 1
  src="$(module_field "k8s.io/kubernetes@v$KUBE_VERSION" Dir)" || return 1
  new_workdir
  gcc -Os -static -DVERSION="v$KUBE_VERSION-sandbox" -o "$dir/pause" "$src/build/pause/linux/pause.c" >&2 || return 1
  strip "$dir/pause" 2>/dev/null || true
  install_bin "$dir/pause" "$kube_dir/pause"
  say "compiled pause from k8s.io/kubernetes@v$KUBE_VERSION/build/pause/linux/pause.c in $(elapsed "$t")"
}

locked_node() {
  install_node_packages || return 1
  build_pause
}

ensure_node() {
  if [ -z "$(node_packages_missing)" ] && [ -x "$kube_dir/pause" ]; then
    say "node: containerd $(containerd --version 2>/dev/null | awk '{print $3}'), runc, CNI plugins, pause cached ($kube_dir)"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    missing+=("the local node's host pieces: run as root on Debian (it installs ${NODE_PACKAGES[*]} and compiles pause)")
    return 0
  fi
  if with_lock node locked_node; then return 0; fi
  missing+=("the local node's host pieces (${NODE_PACKAGES[*]}, pause): the set-up failed (see above)")
}
