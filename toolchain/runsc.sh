#!/usr/bin/env bash
# gVisor for the Docker engine: builds runsc once (toolchain/setup.sh runsc, cached by version) and registers it with
# the engine as the runtime `runsc`, idempotently, keeping every other setting of the engine's daemon.json. The
# engine takes a changed `runtimes` on SIGHUP, without a restart (running containers keep running). Prints the
# registered runtimes. Exit 0 when the engine lists runsc, 3 when it cannot (the message says why).
#   toolchain/runsc.sh            build if needed, register, check
#   toolchain/runsc.sh --check    only check that the engine lists runsc (exit 3 when it does not)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf 'runsc: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 3
}
# shellcheck source=toolchain/manifest.sh
. "$root/toolchain/manifest.sh"
# shellcheck source=toolchain/lock.sh
. "$root/toolchain/lock.sh"

runsc_bin="$(cached_bin_dir "$RUNSC_CACHE_FOLDER" "$GVISOR_VERSION")/runsc"
daemon_json="${SANDBOX_DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}"

registered() {
  docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>/dev/null | tr ' ' '\n' | grep -qx runsc
}

if [ "${1:-}" = "--check" ]; then
  registered && exit 0
  die "the Docker engine has no runtime \"runsc\"; run toolchain/runsc.sh to build and register gVisor"
fi

docker info >/dev/null 2>&1 || die "no Docker engine answers; start one (toolchain/docker.sh) and run this again"
bash "$root/toolchain/setup.sh" runsc || die "runsc could not be built (see above)"

# The engine's runsc is ours when daemon.json names this binary: the JSON merged by Node (never by text edits), the
# rest of the file kept as it is.
register() {
  local node="$root/node_modules/.bin/node"
  [ -x "$node" ] || node=node
  local changed
  changed="$(
    "$node" -e '
      const fs = require("node:fs");
      const [file, bin] = process.argv.slice(1);
      let cfg = {};
      try { cfg = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { if (e.code !== "ENOENT") { console.error(`${file} is not JSON: ${e.message}`); process.exit(3); } }
      if (cfg === null || typeof cfg !== "object" || Array.isArray(cfg)) { console.error(`${file} is not a JSON object`); process.exit(3); }
      const want = { path: bin };
      const runtimes = cfg.runtimes ?? {};
      if (JSON.stringify(runtimes.runsc) === JSON.stringify(want)) { console.log("same"); process.exit(0); }
      cfg.runtimes = { ...runtimes, runsc: want };
      fs.mkdirSync(require("node:path").dirname(file), { recursive: true });
      fs.writeFileSync(`${file}.partial`, `${JSON.stringify(cfg, null, 2)}\n`);
      fs.renameSync(`${file}.partial`, file);
      console.log("changed");
    ' "$daemon_json" "$runsc_bin"
  )" || die "could not register runsc in $daemon_json"
  if [ "$changed" = changed ] || ! registered; then
    local pid
    pid="$(cat /var/run/docker.pid 2>/dev/null || pgrep -xo dockerd || true)"
    [ -n "$pid" ] || die "registered runsc in $daemon_json, but found no dockerd to reload; restart the engine"
    say "registered $runsc_bin in $daemon_json; reloading the engine (SIGHUP to dockerd $pid)"
    kill -HUP "$pid" || die "could not signal dockerd $pid; restart the engine to take $daemon_json"
    for _ in $(seq 1 30); do
      registered && return 0
      sleep 0.5
    done
    die "the engine did not take runsc from $daemon_json after a reload; restart it"
  fi
}
with_lock runsc-register register
registered || die "the engine does not list runsc"
say "the engine's runtimes: $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}')"
