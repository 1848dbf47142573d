#!/usr/bin/env bash
# Writes the schema tables the readers decode with, from the engines' own Go packages (toolchain/schemas/go.mod
# pins their versions): policy/sources/docker/schema.generated.ts. Needs Go (as toolchain/setup.sh finds it).
# Usage: toolchain/schemas.sh [--check]   (--check: exit 1 when a committed table is not what the generator writes)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(dirname "$here")"
PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "schemas: Go is needed on PATH (or at /usr/local/go/bin)" >&2; exit 3; }
out="$top/policy/sources/docker/schema.generated.ts"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
# Formatted as the project's formatter writes TypeScript, so the table reads like the rest of the code.
(cd "$here/schemas" && GOFLAGS=-mod=mod GOTOOLCHAIN=local go run .) |
  "$top/node_modules/.bin/biome" check --write --stdin-file-path="$out" >"$tmp"
if [ "${1:-}" = "--check" ]; then
  cmp -s "$tmp" "$out" || { echo "schemas: $out is stale; run toolchain/schemas.sh" >&2; exit 1; }
else
  cp "$tmp" "$out"
fi
