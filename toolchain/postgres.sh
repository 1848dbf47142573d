#!/usr/bin/env bash
# PostgreSQL for the shared ledger (runtime/ledger/postgres.ts): makes sure Debian's `postgresql` package is installed
# (apt-get, as root, when its server is missing) and prints the folder of its programs. Starting a server is the
# toolkit's own (runtime/ledger/local-postgres.ts: a data folder of its own, a unix socket only, never a port).
set -euo pipefail

die() {
  echo "postgres: $*" >&2
  exit 3
}

server_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
      printf '%s\n' "$d"
      return 0
    fi
  done
  return 1
}

if ! server_bin >/dev/null; then
  { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; } ||
    die "PostgreSQL's server is not installed and this user cannot install it: on Debian, apt-get install -y postgresql (as root), then run this again"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null ||
      die "apt-get could not install Debian's postgresql package"
  }
  server_bin >/dev/null || die "Debian's postgresql package is installed but its server programs were not found under /usr/lib/postgresql"
fi
server_bin
