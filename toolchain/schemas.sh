#!/usr/bin/env bash
# Writes the schema tables the readers decode with, from the engines' own Go packages (toolchain/schemas/go.mod
# pins their versions): policy/sources/docker/schema.generated.ts (the Engine API's types) and
# policy/sources/compose/schema.generated.ts (compose-go's schema) and policy/sources/docker/daemon.generated.ts (the
# daemon's default masked and read-only paths), policy/sources/docker/seccomp.generated.ts (Docker's default seccomp
# profile), policy/sources/kubernetes/schema.generated.ts (the built-in kinds and the pod spec of k8s.io/api), and
# policy/sources/kubernetes/crds.generated.ts (the workload operators' CRD schemas, from their own API packages:
# toolchain/crds/go.mod pins them, a module of its own so that their k8s.io/api never moves the claimed one). Both
# generator modules share toolchain/shapegen. Needs Go (as toolchain/setup.sh finds it).
# Usage: toolchain/schemas.sh [--check]   (--check: exit 1 when a committed table is not what the generator writes)
#        toolchain/schemas.sh --download  (only fetch the generators' modules and compile them: `./sandbox test` does it
#        while the toolchain builds, so that the check, in the oracle tier, waits for no download and little compile)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(dirname "$here")"
PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "schemas: Go is needed on PATH (or at /usr/local/go/bin)" >&2; exit 3; }
status=0
# The generators are pure Go, run once and never debugged: no cgo, no debug information (about a tenth of their
# compile time, cold). The same settings in both steps below, so that the second finds what the first compiled.
export CGO_ENABLED=0
nodebug="-gcflags=all=-dwarf=false -ldflags=-w"
if [ "${1:-}" = "--download" ]; then
  # The packages' modules, not the whole graph (an operator's go.mod lists far more than its API packages need), then
  # the generators compiled into the build cache: the check then only links and runs them.
  for m in schemas crds; do
    (cd "$here/$m" && GOFLAGS="-mod=mod $nodebug" GOTOOLCHAIN=local go list -deps . >/dev/null &&
      GOFLAGS="-mod=mod $nodebug" GOTOOLCHAIN=local go build -o /dev/null .) || status=1
  done
  exit "$status"
fi
# table OUT [ARG [MODULE]]: the generator's table (with ARG; from toolchain/MODULE, schemas by default) formatted as
# the project's formatter writes TypeScript, written to OUT, or with --check compared with it.
table() {
  local out="$1" tmp
  tmp="$(mktemp)"
  (cd "$here/${3:-schemas}" && GOFLAGS="-mod=mod $nodebug" GOTOOLCHAIN=local go run . ${2:+"$2"}) |
    "$top/node_modules/.bin/biome" check --write --stdin-file-path="$out" >"$tmp"
  if [ "$check" = 1 ]; then
    cmp -s "$tmp" "$out" || { echo "schemas: $out is stale; run toolchain/schemas.sh" >&2; status=1; }
  else
    mkdir -p "$(dirname "$out")" && cp "$tmp" "$out"
  fi
  rm -f "$tmp"
}
check=0
[ "${1:-}" = "--check" ] && check=1
table "$top/policy/sources/docker/schema.generated.ts"
table "$top/policy/sources/compose/schema.generated.ts" compose
table "$top/policy/sources/docker/daemon.generated.ts" daemon
table "$top/policy/sources/docker/seccomp.generated.ts" seccomp
table "$top/policy/sources/kubernetes/schema.generated.ts" kubernetes
table "$top/policy/sources/kubernetes/crds.generated.ts" "" crds
exit "$status"
