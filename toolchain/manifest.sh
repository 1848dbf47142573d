# shellcheck shell=bash
# Sourced by the toolchain scripts: reads the toolchain manifest (toolchain/versions.env) into shell variables of the
# same names, sets $cache to the toolkit's cache folder, and defines cached_bin_dir. Fails (status 1, with a message)
# on a line that is not KEY=VALUE, a comment or blank.

toolchain_manifest="$(dirname "${BASH_SOURCE[0]}")/versions.env"
while IFS= read -r manifest_line || [ -n "$manifest_line" ]; do
  case "$manifest_line" in '' | '#'*) continue ;; esac
  if [[ ! "$manifest_line" =~ ^([A-Z][A-Z0-9_]*)=([^[:space:]\"\'\$]+)$ ]]; then
    printf '%s: not a KEY=VALUE line: %s\n' "$toolchain_manifest" "$manifest_line" >&2
    return 1
  fi
  printf -v "${BASH_REMATCH[1]}" '%s' "${BASH_REMATCH[2]}"
done <"$toolchain_manifest"
unset manifest_line

# The per-user cache where the toolkit keeps the tools it builds, by version.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/$CACHE_FOLDER"

# cached_bin_dir TOOL_FOLDER VERSION: the folder of a cached tool's binaries, <cache>/<tool folder>/v<version>/bin.
cached_bin_dir() { printf '%s/%s/v%s/bin\n' "$cache" "$1" "$2"; }
