#!/usr/bin/env bash
# The test suite: type check, lint (zero warnings), then every test of every tier (test/tiers.mts), each as soon as
# what it needs is built, beside the builds still running: the docker tier from the start; the stack tier once the
# toolchain's first stage is built (PostgreSQL, gVisor, the Pulumi CLI); the engine tier once the second is (the
# Kubernetes plugin and control plane); the node tier, alone among the tiers that touch the machine's network, once
# the third is (the node's parts), with the unit and oracle tiers (CPU only) beside it. Arguments go to vitest (one
# run, after every build): `--project unit` runs one tier, file names run those files. Prints one closing line:
# "tests: N passed, N failed".
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
  # The builds (minutes each the first time, cached by version after that), in three stages, one after the other in
  # the background; each stage's end is a file in $stages holding its status, and its log is printed when a tier
  # waits for it. On two cores the builds are the run's critical path: each tier starts as soon as its stage is
  # built and runs beside the next stages, which yield to it (nice 5: a test waiting on a container wakes in time).
  stages="$(mktemp -d)"
  build_stage() {
    local s=0
    case "$1" in
      1)
        echo "== PostgreSQL's server for the shared ledger's tests (Debian's package, installed when missing)"
        bash toolchain/postgres.sh >/dev/null || s=1
        echo "== gVisor (runsc) registered with the engine, the node's containerd (built from Go modules once, then cached)"
        bash toolchain/runsc.sh || s=1
        echo "== the Pulumi engine (built from Go modules once, then cached)"
        bash toolchain/setup.sh pulumi || s=1
        ;;
      2)
        echo "== the Pulumi Kubernetes plugin and the local control plane (built from Go modules once, then cached)"
        nice -n 5 bash toolchain/setup.sh kubernetes-plugin etcd kube || s=1
        ;;
      3)
        echo "== the Kubernetes node's parts and its NetworkPolicy enforcer (built once, then cached)"
        nice -n 5 bash toolchain/setup.sh node netpol || s=1
        ;;
    esac
    echo "$s" >"$stages/$1"
  }
  (for n in 1 2 3; do build_stage "$n" >".sandbox/toolchain-$n.log" 2>&1; done) &
  stages_pid=$!
  # Waits until stage $1 is built (or the builds stopped), prints its log, and counts its failure.
  wait_stage() {
    while [ ! -e "$stages/$1" ] && kill -0 "$stages_pid" 2>/dev/null; do sleep 2; done
    cat ".sandbox/toolchain-$1.log" 2>/dev/null
    [ "$(cat "$stages/$1" 2>/dev/null)" = 0 ] || status=1
  }
  echo "== toolchain: building in three stages beside the tests (logs: .sandbox/toolchain-N.log, printed when waited for)"
  rm -f .sandbox/test-results*.json
  if [ "$#" -gt 0 ]; then
    wait_stage 1
    wait_stage 2
    wait_stage 3
    echo "== tests"
    vitest run --reporter=default --reporter=json --outputFile.json=.sandbox/test-results.json "$@" || status=1
  else
    # The docker tier needs the engine only, and mostly waits on it (a task's deadline, a pool's refill): it runs
    # from the start, beside the builds and the checks below, at a priority between theirs and the lowest, so that a
    # test waiting on a container wakes in time. Its log is printed when it is done.
    echo "== tests on the Docker engine (docker tier), beside the builds (log: .sandbox/docker-tier.log, printed when done)"
    nice -n 5 vitest run --project docker --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-docker.json >.sandbox/docker-tier.log 2>&1 &
    docker_tier_pid=$!
    echo "== type check"
    tsc --noEmit -p tsconfig.json || status=1
    echo "== lint"
    biome check --error-on-warnings . || status=1
    wait "$docker_tier_pid" || status=1
    cat .sandbox/docker-tier.log
    wait_stage 1
    echo "== tests on the Docker engine with gVisor, PostgreSQL and the Pulumi CLI (stack tier), beside the next builds"
    vitest run --project stack --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-stack.json || status=1
    wait_stage 2
    echo "== tests on the engines and the local control plane (engine tier), beside the node's builds"
    vitest run --project engine --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-engine.json || status=1
    wait_stage 3
    # The node tier mostly waits on its node (pods scheduled, started, stopped): the tiers that need nothing but
    # Node and Go run beside it, yielding to it. Their log is printed when they are done.
    echo "== tests that need nothing but Node, or Go (unit and oracle tiers), beside the node tier (log: .sandbox/cpu-tiers.log)"
    nice -n 5 vitest run --project unit --project oracle --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-cpu.json >.sandbox/cpu-tiers.log 2>&1 &
    cpu_tiers_pid=$!
    echo "== tests on a real Kubernetes node (the only tier then on the machine's network: its cgroups, bridge and iptables rules are the machine's)"
    vitest run --project node --reporter=default --reporter=json --outputFile.json=.sandbox/test-results-node.json || status=1
    wait "$cpu_tiers_pid" || status=1
    cat .sandbox/cpu-tiers.log
  fi
  wait "$stages_pid"
  rm -rf "$stages"

  node -e '
  const fs = require("node:fs");
  const t = { numPassedTests: 0, numFailedTests: 0, numTotalTests: 0 };
  for (const f of ["", "docker", "stack", "engine", "cpu", "node"].map((t) => `.sandbox/test-results${t && "-"}${t}.json`)) {
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
