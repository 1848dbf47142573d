# shellcheck shell=bash
# Sourced by toolchain/setup.sh: etcd, the store of the engine tests' local API server (`setup.sh etcd`). The one on
# PATH, else Debian's etcd-server, installed with apt-get (as root, or through sudo without a password).

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
