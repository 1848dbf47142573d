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

# The common frame of an image script. The caller sets root, image, say() and die(), defines candidates() (apt's
# versions of its packages, on one line) and build(), then runs:
#   image_start "${BASH_SOURCE[0]}" "$@"; image_is_current && exit 0; ...; build_locked
# image_start SCRIPT [--update]: the engine up, `update` from the argument, `want` the hash of the recipe (SCRIPT, this
# file and the busybox binary the images copy in), `cache` the tool cache.
image_start() {
  local script="$1"
  shift
  bash "$root/toolchain/docker.sh" engine
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects"
  update=false
  case "${1:-}" in
    --update) update=true ;;
    "") ;;
    *) die "usage: ${script#"$root/"} [--update]" ;;
  esac
  [ -x /bin/busybox ] || bash "$root/toolchain/docker.sh" image
  want="$({
    cat "$script" "$root/toolchain/rootfs.sh"
    sha256sum /bin/busybox | cut -d' ' -f1
  } | sha256sum | cut -c1-16)"
}

# label KEY: the image's label KEY, or nothing.
label() {
  docker image inspect --format "{{ index .Config.Labels \"$1\" }}" "$image" 2>/dev/null || true
}

# image_is_current: the image carries this recipe's hash and, with --update, was built from apt's current versions.
# The hot path asks no package manager anything.
image_is_current() {
  [ "$(label sandbox.image-recipe)" = "$want" ] || return 1
  [ "$update" = true ] || return 0
  [ "$(candidates)" = "$(label sandbox.image-packages)" ]
}

# build_locked: build() holding this image's lock (one lock per image, never one for every set-up), unless the
# set-up it waited for built it.
build_locked() {
  local lock="$cache/locks/image-${image//[^A-Za-z0-9._-]/_}.lock"
  mkdir -p "$(dirname "$lock")"
  if command -v flock >/dev/null 2>&1; then
    exec 8>"$lock"
    flock -n 8 || {
      say "another set-up is building $image; waiting for it..."
      flock 8
    }
  fi
  if [ "$(label sandbox.image-recipe)" = "$want" ] && [ "$update" = false ]; then return 0; fi
  build
}
