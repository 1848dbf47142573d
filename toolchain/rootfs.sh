# shellcheck shell=bash
# Helpers for the offline images made from Debian packages (toolchain/proxy-image.sh, toolchain/broker-image.sh):
# the caller sets say() and die().

# apt_quiet ARGS...: apt-get ARGS quietly, with one `apt-get update` and a retry when the first try fails.
apt_quiet() {
  DEBIAN_FRONTEND=noninteractive apt-get "$@" -y -qq >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get "$@" -y -qq >/dev/null
  }
}

# apt_download DIR PACKAGE...: the packages' .deb files into DIR, without installing them (no service starts).
apt_download() {
  local dir="$1"
  shift
  (cd "$dir" && apt-get download "$@" >/dev/null 2>&1) || {
    apt-get update -qq >/dev/null 2>&1 || true
    (cd "$dir" && apt-get download "$@" >/dev/null)
  }
}

# apt_candidates PACKAGE...: apt's candidate versions of the packages, on one line.
apt_candidates() {
  local out
  out="$(apt-cache policy "$@" 2>/dev/null || true)"
  awk '/Candidate:/ {print $2}' <<<"$out" | tr '\n' ' ' | sed 's/ $//'
}

# copy_with_libs ROOTFS BINARY...: each binary, already under ROOTFS, gets the loader and every shared library `ldd`
# resolves for it, at the paths it looks them up by. A library ldd cannot find ends the build, naming it.
copy_with_libs() {
  local rootfs="$1" bin missing lib
  shift
  for bin in "$@"; do
    missing="$(ldd "$bin" | awk '/not found/ {print $1}')"
    [ -z "$missing" ] || die "$(basename "$bin") needs libraries that are not installed: $missing"
    for lib in $(ldd "$bin" | grep -oE '/[^ ]+'); do
      mkdir -p "$rootfs$(dirname "$lib")"
      cp -L "$lib" "$rootfs$lib"
    done
  done
}
