#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine and that the offline test image exists.
# Idempotent: it starts nothing when an engine already answers and builds nothing when the image is current.
#   toolchain/docker.sh            engine + image + the egress proxy's and the broker's images (toolchain/proxy-image.sh,
#                                  toolchain/broker-image.sh)
#   toolchain/docker.sh engine     engine only
#   toolchain/docker.sh image      the test image only
# Needs: a reachable engine, or root on Debian (it then installs Debian's docker.io and starts dockerd).
# No image is ever pulled: the image is made from Debian's busybox-static and `docker import`ed.
# The hot path (engine answers, image current) asks no package manager anything: the image's label holds the hash
# of what it was built from (this script and the busybox binary), compared with a hash of the local files.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects"
image="${SANDBOX_TEST_IMAGE:-sandbox-busybox:1}"
mkdir -p "$cache"

say() { printf 'docker: %s\n' "$*" >&2; }
die() {
  printf 'docker: %s\n' "$*" >&2
  exit 3
}

# shellcheck source=toolchain/lock.sh
. "$(dirname "${BASH_SOURCE[0]}")/lock.sh"

engine_answers() {
  # Bounded: an engine named at an address that swallows packets must not hold the set-up for long.
  command -v docker >/dev/null 2>&1 && timeout 10 docker info --format '{{.ServerVersion}}' >/dev/null 2>&1
}

# The engine the user named: DOCKER_HOST, or a Docker context other than the default one. The set-up never starts a
# daemon in place of one that was named.
named_engine() {
  if [ -n "${DOCKER_HOST:-}" ] && [ "$DOCKER_HOST" != "unix:///var/run/docker.sock" ]; then
    printf '%s' "$DOCKER_HOST"
  elif [ -n "${DOCKER_CONTEXT:-}" ] && [ "$DOCKER_CONTEXT" != default ]; then
    printf 'the Docker context %s' "$DOCKER_CONTEXT"
  elif command -v docker >/dev/null 2>&1; then
    local ctx
    ctx="$(timeout 5 docker context show 2>/dev/null || true)"
    if [ -n "$ctx" ] && [ "$ctx" != default ]; then printf 'the Docker context %s' "$ctx"; fi
  fi
}

# A local dockerd process that runs but does not answer (a second one would fail on its pid file and its socket).
running_dockerd() {
  local pid
  if [ -f /var/run/docker.pid ]; then
    pid="$(cat /var/run/docker.pid 2>/dev/null || true)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      printf '%s' "$pid"
      return 0
    fi
  fi
  pgrep -x dockerd 2>/dev/null | head -n1 || true
}

can_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  }
}

ensure_engine() {
  if engine_answers; then return 0; fi
  # An engine named elsewhere is never replaced by one started here: said at once, no lock taken.
  local named
  named="$(named_engine)"
  if [ -n "$named" ]; then
    die "no Docker engine answers at $named; start it or name another (DOCKER_HOST, docker context use). Nothing was started here."
  fi
  with_lock docker-engine start_engine
}

start_engine() {
  # The set-up this one waited for may have started it.
  if engine_answers; then return 0; fi
  local running
  running="$(running_dockerd)"
  if [ -n "$running" ]; then
    die "a Docker engine runs here (dockerd, pid $running) but does not answer on its socket; wait for it or restart it. A second one is not started."
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    can_install || die "no Docker engine answers and none is installed. Install Docker (on Debian: apt-get install -y docker.io), start it, and run this again."
    say "installing Debian's docker.io"
    apt_install docker.io
  fi
  if ! command -v docker >/dev/null 2>&1; then
    die "dockerd is installed but the docker client is not; install docker.io (or docker-ce-cli)"
  fi
  [ "$(id -u)" = 0 ] || die "no Docker engine answers; start it (e.g. 'sudo systemctl start docker') and run this again."
  say "starting dockerd (log: $cache/dockerd.log)"
  # A pid file left by an engine that was killed would stop a new one from starting.
  if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then rm -f /var/run/docker.pid; fi
  # Appended: the log of an earlier engine is kept. The engine outlives this set-up: it must not keep the set-up's
  # lock open (with_lock's $fd), or every later set-up that finds no engine would wait for the lock forever.
  if [ -n "${fd:-}" ]; then
    nohup dockerd >>"$cache/dockerd.log" 2>&1 {fd}>&- &
  else
    nohup dockerd >>"$cache/dockerd.log" 2>&1 &
  fi
  for _ in $(seq 1 60); do
    if engine_answers; then
      say "engine $(docker info --format '{{.ServerVersion}}') is up"
      return 0
    fi
    sleep 1
  done
  tail -20 "$cache/dockerd.log" >&2 || true
  die "dockerd did not answer within 60 s (see $cache/dockerd.log)"
}

# The recipe's hash is stored as a label: a changed recipe rebuilds the image, an unchanged one is reused.
recipe_hash() {
  { cat "${BASH_SOURCE[0]}"; sha256sum "$busybox" | cut -d' ' -f1; } | sha256sum | cut -c1-16
}

image_recipe() {
  docker image inspect --format '{{ index .Config.Labels "sandbox.image-recipe" }}' "$image" 2>/dev/null || true
}

busybox=/bin/busybox

ensure_image() {
  # Hot path: the image was built from exactly this script and this busybox (checked when it was built).
  if [ -x "$busybox" ] && [ "$(image_recipe)" = "$(recipe_hash)" ]; then return 0; fi
  with_lock "image-${image//[^A-Za-z0-9._-]/_}" build_image
}

# usable_busybox: the static busybox with the applets the walls need. Reads whole outputs and files (no `cmd |
# grep -q` under pipefail, where grep's early exit could fail the pipeline by SIGPIPE now and then).
usable_busybox() {
  [ -x "$busybox" ] || return 1
  local applets
  applets="$("$busybox" --list 2>/dev/null || true)"
  grep -qx ip <<<"$applets" || return 1
  file_is_static "$busybox"
}

build_image() {
  if ! usable_busybox; then
    can_install || die "the test image needs Debian's busybox-static (apt-get install -y busybox-static)"
    say "installing Debian's busybox-static"
    apt_install busybox-static
    usable_busybox || die "$busybox is not Debian's busybox-static with the ip applet; apt-get install -y busybox-static"
  fi
  local want
  want="$(recipe_hash)"
  # The set-up this one waited for may have built it.
  if [ "$(image_recipe)" = "$want" ]; then return 0; fi
  say "building $image offline from busybox-static"
  local rootfs
  rootfs="$(mktemp -d)"
  # Cleared once it ran: a RETURN trap set here would also fire when the callers return.
  trap 'rm -rf "$rootfs"; trap - RETURN' RETURN
  mkdir -p "$rootfs"/{bin,etc,tmp,job,proc,sys,dev,root}
  cp "$busybox" "$rootfs/bin/busybox"
  for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox task:/job:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  chown 1000:1000 "$rootfs/job"
  chmod 1777 "$rootfs/tmp"
  chmod 700 "$rootfs/root"
  tar --numeric-owner -C "$rootfs" -c . |
    docker import \
      -c 'ENV PATH=/bin' \
      -c 'WORKDIR /job' \
      -c 'CMD ["sh"]' \
      -c "LABEL sandbox.image-recipe=$want sandbox.managed-by=sandbox-projects" \
      - "$image" >/dev/null
  say "built $image ($want)"
}

file_is_static() {
  # Debian's busybox (dynamic) and busybox-static both install /bin/busybox; only the static one runs in an image
  # that has no C library. dpkg's own record of the package's files says which one this is; without dpkg, an ELF
  # file that names no program interpreter (the dynamic loader) is static.
  local list=/var/lib/dpkg/info/busybox-static.list
  if [ -d /var/lib/dpkg/info ]; then
    [ -f "$list" ] && grep -qxF "$1" "$list"
    return
  fi
  local head
  head="$(head -c 4 "$1" | od -An -c | tr -d ' \n')"
  [ "$head" = "177ELF" ] && ! grep -q "ld-linux" "$1"
}

case "${1:-all}" in
  engine) ensure_engine ;;
  image) ensure_image ;;
  all)
    ensure_engine
    ensure_image
    bash "$root/toolchain/proxy-image.sh"
    bash "$root/toolchain/broker-image.sh"
    ;;
  *) die "usage: toolchain/docker.sh [engine|image|all]" ;;
esac
