#!/usr/bin/env bash
# Builds the Trivy CLI, the peer of the start-up benchmark (bench/startup.ts), from the Go module proxy and caches it:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects/trivy/v<version>/bin/trivy
# Prints the binary's path on its last line. A second run finds the cached binary and builds nothing.
# Needs Go 1.26.3 or later on PATH or at /usr/local/go/bin (Trivy's go.mod asks for it). The first build is long
# (Trivy has several hundred module dependencies): 23 minutes here on 2 cores shared with other builds.
set -euo pipefail
version="${TRIVY_VERSION:-0.74.0}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-projects/trivy/v${version}"
bin="$cache/bin/trivy"
if [[ -x "$bin" ]] && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "cannot build Trivy v${version}: no \`go\` on PATH (install Go 1.26.3 or later)" >&2
  exit 3
fi
mkdir -p "$cache/bin"
echo "building Trivy v${version} from the Go module proxy (this takes a long time the first time)..." >&2
# `go install module@version` builds in module mode from the proxy without touching this repository; GOTOOLCHAIN=local
# never switches toolchains. Trivy is built with encoding/json/v2 (GOEXPERIMENT=jsonv2), as its release build is.
GOEXPERIMENT=jsonv2 GOTOOLCHAIN=local GOBIN="$cache/bin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
  "github.com/aquasecurity/trivy/cmd/trivy@v${version}" >&2
"$bin" --version >&2
echo "$bin"
