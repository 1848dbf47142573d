#!/usr/bin/env bash
# Builds the egress proxy's image offline from Debian's Squid: nothing is pulled. Idempotent: the image carries the
# hash of its recipe (this script and the busybox binary copied in) as the label sandbox.image-recipe, and the
# versions of the Squid packages it was built from as sandbox.image-packages. The hot path compares the recipe
# label with a hash of those local files and nothing else: no package manager is asked (an `apt-cache policy` on
# every verb was slow and now and then wrong). Newer Squid packages are picked up by a rebuild, or on request:
#   toolchain/proxy-image.sh           the image sandbox-proxy:1 (SANDBOX_PROXY_IMAGE overrides the name)
#   toolchain/proxy-image.sh --update  also rebuild when apt offers other Squid versions than the image's
# Needs: a Docker engine (toolchain/docker.sh starts one), and Debian's apt for the packages: `apt-get download`
# fetches squid, squid-common and squid-langpack without installing them (no service is started); the two libraries Squid needs
# that a minimal Debian lacks (libecap3, libltdl7) are installed as plain libraries.
#
# The image: /usr/sbin/squid with exactly the shared libraries `ldd` names, Squid's error templates and MIME table,
# busybox-static as the shell of the entry script, a `proxy` user (13:13), and /usr/local/bin/sandbox-proxy, which
# writes the configuration the toolkit generated (in SANDBOX_PROXY_CONFIG, or a file at /etc/sandbox-proxy/squid.conf)
# to the tmpfs at /run/squid and runs Squid in the foreground. The root filesystem can be read-only.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
image="${SANDBOX_PROXY_IMAGE:-sandbox-proxy:1}"

say() { printf 'proxy-image: %s\n' "$*" >&2; }
die() {
  printf 'proxy-image: %s\n' "$*" >&2
  exit 3
}

# shellcheck source=toolchain/rootfs.sh
. "$root/toolchain/rootfs.sh"

image_start "${BASH_SOURCE[0]}" "$@"

# apt's candidate versions of the Squid packages, one line (only on a build or --update: never on the hot path).
candidates() { apt_candidates squid squid-common squid-langpack; }
image_is_current && exit 0

build() {
command -v apt-get >/dev/null 2>&1 || die "the proxy image is built from Debian's squid package; apt-get is needed"
versions="$(candidates)"
case "$versions" in *none* | "") die "Debian's squid package is not available from apt (apt-get update, then retry)" ;; esac

entry='#!/bin/sh
# Writes the generated configuration to the tmpfs and runs Squid in the foreground (no daemon, no pid file).
set -eu
umask 077
conf=/run/squid/squid.conf
if [ -n "${SANDBOX_PROXY_CONFIG:-}" ]; then
  printf "%s\n" "$SANDBOX_PROXY_CONFIG" > "$conf"
elif [ -r /etc/sandbox-proxy/squid.conf ]; then
  cat /etc/sandbox-proxy/squid.conf > "$conf"
else
  echo "sandbox-proxy: no configuration (SANDBOX_PROXY_CONFIG or /etc/sandbox-proxy/squid.conf)" >&2
  exit 2
fi
/usr/sbin/squid -k parse -f "$conf" >/dev/null 2>&1 || { /usr/sbin/squid -k parse -f "$conf"; exit 2; }
exec /usr/sbin/squid -N -f "$conf"
'

say "building $image offline from Debian's squid $versions"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
apt_quiet install --no-install-recommends libecap3 libltdl7
apt_download "$work" squid squid-common squid-langpack
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/pkg"; done

rootfs="$work/rootfs"
mkdir -p "$rootfs"/{bin,etc,tmp,run/squid,proc,sys,dev,usr/sbin,usr/local/bin,usr/share/squid,etc/sandbox-proxy}
mkdir -p "$rootfs/usr/lib/squid"
cp "$work/pkg/usr/sbin/squid" "$rootfs/usr/sbin/squid"
# Squid starts its unlinkd helper even without a disk cache.
cp "$work/pkg/usr/lib/squid/unlinkd" "$rootfs/usr/lib/squid/unlinkd"
copy_with_libs "$rootfs" "$rootfs/usr/sbin/squid" "$rootfs/usr/lib/squid/unlinkd"
# Squid's error pages (its `errors` folder links to squid-langpack); the language-neutral templates suffice.
mkdir -p "$rootfs/usr/share/squid/errors"
cp -r "$work/pkg/usr/share/squid-langpack/templates" "$rootfs/usr/share/squid/errors/templates"
cp "$work/pkg/usr/share/squid/mime.conf" "$rootfs/usr/share/squid/mime.conf"
cp -r "$work/pkg/usr/share/squid/icons" "$rootfs/usr/share/squid/icons"
cp /bin/busybox "$rootfs/bin/busybox"
for applet in sh cat printf; do ln -sf busybox "$rootfs/bin/$applet"; done
printf '%s' "$entry" >"$rootfs/usr/local/bin/sandbox-proxy"
chmod 755 "$rootfs/usr/local/bin/sandbox-proxy"
printf 'root:x:0:0:root:/nonexistent:/bin/false\nproxy:x:13:13:proxy:/nonexistent:/bin/false\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nproxy:x:13:\n' >"$rootfs/etc/group"
printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
chmod 1777 "$rootfs/tmp"
chown 13:13 "$rootfs/run/squid"
tar --numeric-owner -C "$rootfs" -c . |
  docker import \
    -c 'ENV PATH=/usr/local/bin:/usr/sbin:/bin' \
    -c 'USER 13:13' \
    -c 'ENTRYPOINT ["/usr/local/bin/sandbox-proxy"]' \
    -c "LABEL sandbox.image-recipe=$want sandbox.image-packages=\"$versions\" sandbox.managed-by=sandbox-projects" \
    - "$image" >/dev/null
say "built $image ($want; squid packages $versions)"
}

build_locked
