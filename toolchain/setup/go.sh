# shellcheck shell=bash
# Sourced by toolchain/setup.sh: the Go toolchain the builds use, and module downloads through the Go module proxy.

# The Go toolchain: `go` on PATH, else the standard install location. Sets $go; false (with a message) when there
# is none, or it is older than MIN_GO_VERSION (the manifest).
go=""
find_go() {
  [ -n "$go" ] && return 0
  local candidate
  candidate="$(command -v go || true)"
  [ -z "$candidate" ] && [ -x /usr/local/go/bin/go ] && candidate=/usr/local/go/bin/go
  if [ -z "$candidate" ]; then
    say "no Go toolchain: install Go $MIN_GO_VERSION or later (https://go.dev/doc/install) and put \`go\` on PATH."
    return 1
  fi
  local v
  v="$("$candidate" env GOVERSION 2>/dev/null || true)"
  v="${v#go}"
  if [ -z "$v" ] || ! version_ge "$v" "$MIN_GO_VERSION"; then
    say "$candidate is Go ${v:-of an unknown version}; the builds need Go $MIN_GO_VERSION or later."
    return 1
  fi
  go="$candidate"
  # Never switch toolchains behind the user's back; never fall back to a VCS host: modules come through the proxy
  # only (GOPROXY's trailing `direct` is dropped; a proxy that refuses a module is an error that names it).
  local proxy
  proxy="$("$candidate" env GOPROXY)"
  case "$proxy" in
    *,direct | *"|direct") export GOPROXY="${proxy%[,|]direct}" ;;
  esac
  # The binaries are built stripped (-ldflags -s -w): the compiler's debug information would only be thrown away at
  # the link, so it is not made (about a tenth of the compile time).
  export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=mod -gcflags=all=-dwarf=false" CGO_ENABLED=0
  say "using $go (go$v, GOPROXY=$("$go" env GOPROXY))"
}

# module_field MODULE@VERSION FIELD: downloads a module through the proxy and prints one field of `go mod download
# -json` (Dir, GoMod); on failure prints the proxy's error and returns 1.
module_field() {
  local json value
  json="$("$go" mod download -json "$1" 2>&1 || true)"
  value="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"'"$2"'": "\(.*\)",\{0,1\}$/\1/p' | head -n1)"
  if [ -z "$value" ] || [ ! -e "$value" ]; then
    printf 'cannot download %s: %s\n' "$1" \
      "$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' | head -n1)" >&2
    return 1
  fi
  printf '%s\n' "$value"
}
