#!/usr/bin/env bash
# Builds the secrets broker's image offline from Debian's HAProxy: nothing is pulled. Idempotent, the way
# toolchain/proxy-image.sh is: the image carries the hash of its recipe (this script, toolchain/rootfs.sh and the
# busybox binary copied in) as the label sandbox.image-recipe and the package versions as sandbox.image-packages; the
# hot path compares the recipe label with a hash of those local files and asks no package manager anything.
#   toolchain/broker-image.sh           the image sandbox-broker:1 (SANDBOX_BROKER_IMAGE overrides the name)
#   toolchain/broker-image.sh --update  also rebuild when apt offers other HAProxy or CA versions than the image's
# Needs: a Docker engine (toolchain/docker.sh starts one) and Debian's apt: `apt-get download` fetches haproxy and
# ca-certificates without installing them (no service is started); the two libraries HAProxy needs that a minimal
# Debian lacks (liblua5.3-0, libopentracing-c-wrapper0) are installed as plain libraries.
#
# Why HAProxy: the broker must refuse private ranges and the metadata address *after* resolving an upstream's name
# and then connect to exactly the address it judged (no second lookup a rebinding DNS could answer differently).
# HAProxy does that with configuration alone (`do-resolve`, an `ip` ACL, `set-dst` to a server at 0.0.0.0); nginx and
# Squid's reverse-proxy mode connect to a name they resolve themselves. It also has per-route request rates (stick
# tables), header rewriting, path rewriting and verified TLS to the upstream, so no proxying code is hand-written.
#
# The image: /usr/sbin/haproxy with exactly the shared libraries `ldd` names, Mozilla's CA bundle from Debian's
# ca-certificates at /etc/ssl/certs/ca-certificates.crt, busybox-static as the shell of the entry script, a `broker`
# user (10100:10100), and /usr/local/bin/sandbox-broker, which writes the configuration the toolkit generated (in
# SANDBOX_BROKER_CONFIG, or a file at /etc/sandbox-broker/haproxy.cfg) to the tmpfs at /run/broker, exports each file
# of /run/secrets/sandbox-broker as the variable of its name (Kubernetes mounts the broker's Secret there; on Docker
# the credentials arrive as variables), checks the configuration and runs HAProxy in the foreground; a Lua task the
# configuration loads (/usr/local/share/sandbox-broker/ready.lua) says "sandbox-broker: ready" on stderr once HAProxy
# serves. The root filesystem can be read-only.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
image="${SANDBOX_BROKER_IMAGE:-sandbox-broker:1}"

say() { printf 'broker-image: %s\n' "$*" >&2; }
die() {
  printf 'broker-image: %s\n' "$*" >&2
  exit 3
}

# shellcheck source=toolchain/rootfs.sh
. "$root/toolchain/rootfs.sh"

image_start "${BASH_SOURCE[0]}" "$@"

candidates() { apt_candidates haproxy ca-certificates; }
image_is_current && exit 0

build() {
  command -v apt-get >/dev/null 2>&1 || die "the broker image is built from Debian's haproxy package; apt-get is needed"
  versions="$(candidates)"
  case "$versions" in *none* | "") die "Debian's haproxy package is not available from apt (apt-get update, then retry)" ;; esac

  entry='#!/bin/sh
# Writes the generated configuration to the tmpfs, exports the mounted credentials, checks the configuration and
# runs HAProxy in the foreground (no daemon, no pid file, no admin socket).
set -eu
umask 077
conf=/run/broker/haproxy.cfg
if [ -n "${SANDBOX_BROKER_CONFIG:-}" ]; then
  printf "%s\n" "$SANDBOX_BROKER_CONFIG" > "$conf"
elif [ -r /etc/sandbox-broker/haproxy.cfg ]; then
  cat /etc/sandbox-broker/haproxy.cfg > "$conf"
else
  echo "sandbox-broker: no configuration (SANDBOX_BROKER_CONFIG or /etc/sandbox-broker/haproxy.cfg)" >&2
  exit 2
fi
unset SANDBOX_BROKER_CONFIG
if [ -d /run/secrets/sandbox-broker ]; then
  for f in /run/secrets/sandbox-broker/*; do
    [ -f "$f" ] || continue
    n="${f##*/}"
    case "$n" in SANDBOX_BROKER_CRED_*) ;; *) continue ;; esac
    export "$n=$(cat "$f")"
  done
fi
/usr/sbin/haproxy -c -q -f "$conf" || { echo "sandbox-broker: the generated configuration was refused" >&2; exit 2; }
exec /usr/sbin/haproxy -db -f "$conf"
'

  say "building $image offline from Debian's haproxy and ca-certificates $versions"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  chmod 755 "$work"
  apt_quiet install --no-install-recommends liblua5.3-0 libopentracing-c-wrapper0
  apt_download "$work" haproxy ca-certificates
  for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/pkg"; done

  rootfs="$work/rootfs"
  mkdir -p "$rootfs"/{bin,etc/ssl/certs,tmp,run/broker,run/secrets,proc,sys,dev,usr/sbin,usr/local/bin,etc/sandbox-broker}
  cp "$work/pkg/usr/sbin/haproxy" "$rootfs/usr/sbin/haproxy"
  copy_with_libs "$rootfs" "$rootfs/usr/sbin/haproxy"
  # The bundle update-ca-certificates would make from Mozilla's set, in a stable order.
  find "$work/pkg/usr/share/ca-certificates/mozilla" -name '*.crt' | LC_ALL=C sort | xargs cat \
    >"$rootfs/etc/ssl/certs/ca-certificates.crt"
  [ -s "$rootfs/etc/ssl/certs/ca-certificates.crt" ] || die "Debian's ca-certificates package held no certificates"
  cp /bin/busybox "$rootfs/bin/busybox"
  for applet in sh cat printf; do ln -sf busybox "$rootfs/bin/$applet"; done
  printf '%s' "$entry" >"$rootfs/usr/local/bin/sandbox-broker"
  # One line on stderr once HAProxy runs its event loop (its listeners are bound by then): the runtime waits for it.
  mkdir -p "$rootfs/usr/local/share/sandbox-broker"
  printf '%s\n' 'core.register_task(function() io.stderr:write("sandbox-broker: ready\n") end)' \
    >"$rootfs/usr/local/share/sandbox-broker/ready.lua"
  chmod 755 "$rootfs/usr/local/bin/sandbox-broker"
  printf 'root:x:0:0:root:/nonexistent:/bin/false\nbroker:x:10100:10100:broker:/nonexistent:/bin/false\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nbroker:x:10100:\n' >"$rootfs/etc/group"
  printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
  chmod 1777 "$rootfs/tmp"
  chown 10100:10100 "$rootfs/run/broker"
  tar --numeric-owner -C "$rootfs" -c . |
    docker import \
      -c 'ENV PATH=/usr/local/bin:/usr/sbin:/bin' \
      -c 'USER 10100:10100' \
      -c 'ENTRYPOINT ["/usr/local/bin/sandbox-broker"]' \
      -c "LABEL sandbox.image-recipe=$want sandbox.image-packages=\"$versions\" sandbox.managed-by=sandbox-projects" \
      - "$image" >/dev/null
  say "built $image ($want; packages $versions)"
}

build_locked
