#!/usr/bin/env bash
# Builds the OPA CLI, the peer of the benchmarks, from the Go module proxy and caches it:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects/opa/v<version>/bin/opa
# Prints the binary's path on its last line. A second run finds the cached binary and builds nothing.
# Needs Go 1.22 or later on PATH (OPA's go.mod asks for it; the go command fetches a newer toolchain when told to).
set -euo pipefail
version="${OPA_VERSION:-1.22.3}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects/opa/v${version}"
bin="$cache/bin/opa"
if [[ -x "$bin" ]] && "$bin" version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "cannot build OPA v${version}: no \`go\` on PATH (install Go 1.22 or later)" >&2
  exit 3
fi
mkdir -p "$cache/bin"
echo "building OPA v${version} from the Go module proxy (this takes a few minutes)..." >&2
# `go install module@version` builds in module mode from the proxy without touching this repository.
GOBIN="$cache/bin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
  "github.com/open-policy-agent/opa@v${version}" >&2
"$bin" version >&2
echo "$bin"
