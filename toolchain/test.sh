#!/usr/bin/env bash
# The test suite: type check, lint (zero warnings), then every test of every tier (test/tiers.mts): the docker tier
# and the unit tier while the toolchain builds; then the oracle, stack and engine tiers in one run, then the node tier
# on its own. Arguments go to vitest (one run): `--project unit` runs one tier, file names run those files. Prints one closing line: "tests: N passed, N failed".
set -uo pipefail
# The whole script is one function, called on the last line: bash has read all of it before anything runs, so
# editing this file while the suite runs is harmless.
run_suite() {
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cd "$root" || exit 1
  export PATH="$root/node_modules/.bin:$PATH"
  mkdir -p .sandbox

  status=0
  echo "== Docker engine and the offline test image"
  bash toolchain/docker.sh || exit 3
  # kwok, for the scale test's simulated nodes, builds beside the rest (a few minutes the first time, mostly the
  # module download); the scale test runs `setup.sh kwok` itself, which waits for this build or finds it cached.
  # Work beside the builds that no test waits on within a timeout runs at a low priority (`beside`): the builds are
  # the run's critical path, and on two cores they keep both busy except where one package or one link holds them to
  # one core; that work fills those gaps instead of slowing them. Tests never run that low: starved, a test that
  # needs seconds of CPU runs past its timeout (measured cold: the policy pack's load, 120 s).
  beside() { nice -n 19 "$@"; }
  beside bash toolchain/setup.sh kwok >.sandbox/kwok-setup.log 2>&1 &
  # The schema generators' modules (hundreds of MB the first time: the operators' API packages) download and compile
  # beside the builds: the oracle tier's check of the generated tables then only links and runs them.
  beside bash toolchain/schemas.sh --download >.sandbox/schemas-download.log 2>&1 &
  # The builds (minutes each the first time, cached by version after that) run beside the docker tier, the type check,
  # the lint and the unit tier, which need none of them; the other tiers wait for them.
  build_toolchain() {
    local s=0
    echo "== PostgreSQL's server for the shared ledger's tests (Debian's package, installed when missing)"
    bash toolchain/postgres.sh >/dev/null || s=1
    echo "== gVisor (runsc) registered with the engine (built from Go modules once, then cached)"
    bash toolchain/runsc.sh || s=1
    echo "== the Pulumi engine, the local Kubernetes control plane and node (built from Go modules once, then cached)"
    bash toolchain/setup.sh || s=1
    return "$s"
  }
  echo "== toolchain: building beside the docker and unit tiers (log: .sandbox/toolchain.log, printed when done)"
  build_toolchain >.sandbox/toolchain.log 2>&1 &
  toolchain_pid=$!
  wait_toolchain() {
    [ -n "$toolchain_pid" ] || return 0
    wait "$toolchain_pid" || status=1
    toolchain_pid=""
    cat .sandbox/toolchain.log
  }
  rm -f .sandbox/test-results*.json
  if [ "$#" -gt 0 ]; then
    wait_toolchain
    echo "== tests"
    vitest run --reporter=default --reporter=json --outputFile.json=.sandbox/test-results.json "$@" || status=1
  else
    # The docker tier needs the engine only, and mostly waits on it (a task's deadline, a pool's refill): it runs
    # from the start, beside the builds and the checks below, at a priority between theirs, so that a test waiting on
    # a container wakes in time. Its log is printed when it is done.
    echo "== tests on the Docker engine (docker tier), beside the builds (log: .sandbox/docker-tier.log, printed when done)"
    nice -n 5 vitest run --project docker --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-docker.json >.sandbox/docker-tier.log 2>&1 &
    docker_tier_pid=$!
    # The unit tier keeps its temp files in a folder of its own: a run's end unmounts the job-folder disks it finds
    # left under its temp folder (test/global-setup.ts), and the docker tier's are in use.
    own_tmp="$(mktemp -d)"
    echo "== type check"
    tsc --noEmit -p tsconfig.json || status=1
    echo "== lint"
    biome check --error-on-warnings . || status=1
    echo "== tests that need nothing but Node (unit tier)"
    TMPDIR="$own_tmp" vitest run --project unit --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-unit.json || status=1
    rm -rf "$own_tmp"
    # The oracles build Go programs inside their tests: beside the builds, on two cores, one could pass its timeout.
    wait_toolchain
    wait "$docker_tier_pid" || status=1
    cat .sandbox/docker-tier.log
    echo "== tests on Go oracles and on the engines (oracle, stack and engine tiers)"
    vitest run --project oracle --project stack --project engine --reporter=default --reporter=json --outputFile.json=.sandbox/test-results.json || status=1
    echo "== tests on a real Kubernetes node (alone: its cgroups, bridge and iptables rules are the machine's)"
    vitest run --project node --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-node.json || status=1
  fi

  node -e '
  const fs = require("node:fs");
  const t = { numPassedTests: 0, numFailedTests: 0, numTotalTests: 0 };
  for (const f of ["unit", "docker", "", "node"].map((t) => `.sandbox/test-results${t && "-"}${t}.json`)) {
    try {
      const r = JSON.parse(fs.readFileSync(f, "utf8"));
      for (const k of Object.keys(t)) t[k] += r[k] ?? 0;
    } catch {}
  }
  console.log(`tests: ${t.numPassedTests} passed, ${t.numFailedTests} failed`);
  if (t.numTotalTests === 0) process.exit(1);
  ' || status=1
  exit "$status"
}

run_suite "$@"; exit
