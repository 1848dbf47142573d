# shellcheck shell=bash
# Sourced by toolchain/setup.sh: messages, timing, version comparison, throwaway build folders, installing into the
# cache, and the list of what is missing. The caller has read the manifest (toolchain/manifest.sh).

# What is missing after each part has run: one line each, printed by setup.sh at the end.
missing=()

say() { printf 'setup: %s\n' "$*" >&2; }
now() { date +%s; }
elapsed() { printf '%ss' "$(($(now) - $1))"; }
size_of() { du -h "$1" | cut -f1; }

# version_ge A B: true when dotted version A >= B.
version_ge() {
  [ "$(printf '%s\n%s\n' "${1#v}" "${2#v}" | sort -V | head -n1)" = "${2#v}" ]
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

# install_bin SRC DEST: moves a fresh build into the cache atomically.
install_bin() {
  mkdir -p "$(dirname "$2")"
  install -m 0755 "$1" "$2.partial"
  mv -f "$2.partial" "$2"
}
