#!/usr/bin/env bash
# The pull request checks as one project script. The GitHub workflow (.github/workflows/pr-checks.yml) runs it, a
# person can run it from a checkout, and test/scan/pr-checks.test.ts runs it (without the test step) so that its
# logic is tested even where the hosted workflow cannot run.
#
#   1. tests     the test suite (toolchain/test.sh)
#   2. preview   `pulumi preview --policy-pack policy --json` of every stack with the Pulumi CLI, on a throwaway
#                local state; each preview's JSON is kept for the scan
#   3. scan      the policy pack's rules (cli/scan.ts) over those previews, the runtime launch spec of every
#                template of every stack, and the paths given, to SARIF (for code scanning) and JSON
#   4. summary   Markdown for the pull request comment and the job summary
#
# usage: toolchain/pr-checks.sh [--skip-tests] [--skip-preview] [--require-preview] [--out DIR] [path...]
#   --require-preview   a missing Pulumi CLI fails the checks (exit 3) instead of skipping the previews (CI sets it)
#   path...             more files or folders to scan (Kubernetes YAML, Compose files, ...)
# environment:
#   PR_CHECKS_STACKS    stacks to preview (default: every stacks/Pulumi.<stack>.yaml)
#   PULUMI              the Pulumi CLI (default: `pulumi` on PATH, then the toolkit's cache)
#   PULUMI_CONFIG_PASSPHRASE   for the throwaway state (default: the dev passphrase)
# writes in DIR (default .sandbox/pr-checks): steps.tsv, preview-<stack>.json and .log, launch/, scan.sarif,
# scan.json, summary.md (also appended to $GITHUB_STEP_SUMMARY when set).
# exit status: 0 every step passed; 1 a step failed (tests, a preview, or a mandatory rule); 2 the scan met bad
# input; 3 a required tool is missing.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
export PATH="$root/node_modules/.bin:$PATH"
# shellcheck source=toolchain/manifest.sh
. "$root/toolchain/manifest.sh" || exit 3

skip_tests=0
skip_preview=0
require_preview=0
out=".sandbox/pr-checks"
paths=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --skip-tests) skip_tests=1 ;;
    --skip-preview) skip_preview=1 ;;
    --require-preview) require_preview=1 ;;
    --out)
      shift
      out="${1:?--out needs a folder}"
      ;;
    --out=*) out="${1#--out=}" ;;
    -*)
      echo "pr-checks: unknown option $1" >&2
      exit 2
      ;;
    *) paths+=("$1") ;;
  esac
  shift
done

rm -rf "$out"
mkdir -p "$out/launch"
out="$(cd "$out" && pwd)"
steps="$out/steps.tsv"
: >"$steps"
failed=0
step() { # name status detail
  printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$steps"
  printf 'pr-checks: %s: %s%s\n' "$1" "$2" "${3:+ ($3)}" >&2
  [ "$2" = failed ] && failed=1
  return 0
}

# The stacks: every stacks/Pulumi.<stack>.yaml unless named.
if [ -n "${PR_CHECKS_STACKS:-}" ]; then
  read -r -a stacks <<<"$PR_CHECKS_STACKS"
else
  stacks=()
  for f in stacks/Pulumi.*.yaml; do
    [ -e "$f" ] || continue
    s="${f#stacks/Pulumi.}"
    stacks+=("${s%.yaml}")
  done
fi

# 1. tests
if [ "$skip_tests" = 1 ]; then
  step tests skipped "--skip-tests"
else
  if bash toolchain/test.sh >"$out/tests.log" 2>&1; then
    step tests passed "$(tail -n 1 "$out/tests.log")"
  else
    step tests failed "$(tail -n 1 "$out/tests.log"); see tests.log"
  fi
fi

# 2. preview every stack with the policy pack
find_pulumi() {
  if [ -n "${PULUMI:-}" ]; then
    [ -x "$PULUMI" ] && echo "$PULUMI"
    return 0
  fi
  command -v pulumi 2>/dev/null && return 0
  local cached
  cached="$(cached_bin_dir "$PULUMI_CACHE_FOLDER" "$PULUMI_VERSION")/pulumi"
  [ -x "$cached" ] && echo "$cached"
  return 0
}
previews=()
pulumi_cli="$(find_pulumi)"
if [ "$skip_preview" = 1 ]; then
  step preview skipped "--skip-preview"
elif [ -z "$pulumi_cli" ]; then
  if [ "$require_preview" = 1 ]; then
    step preview failed "no Pulumi CLI (PATH, \$PULUMI or the toolkit's cache)"
    cp "$steps" "$out/steps.final.tsv" 2>/dev/null
    exit 3
  fi
  step preview skipped "no Pulumi CLI on this machine"
else
  # The official CLI runs the pack through its Node policy analyzer; a CLI built without one (the toolkit's, from
  # the Go module proxy) is given the pack's launcher instead.
  pack="policy"
  if ! command -v pulumi-analyzer-policy >/dev/null 2>&1 && [ ! -x "$(dirname "$pulumi_cli")/pulumi-analyzer-policy" ]; then
    pack="$root/policy/run-pack"
  fi
  mkdir -p "$out/state"
  export PULUMI_BACKEND_URL="file://$out/state"
  export PULUMI_SKIP_UPDATE_CHECK=true
  export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE:-sandbox-dev-passphrase}"
  export PULUMI_HOME="${PULUMI_HOME:-$root/.sandbox/pulumi-home}"
  for s in "${stacks[@]}"; do
    json="$out/preview-$s.json"
    log="$out/preview-$s.log"
    if ! "$pulumi_cli" stack select --create --non-interactive "$s" >"$log" 2>&1; then
      step "preview $s" failed "cannot create the stack; see preview-$s.log"
      continue
    fi
    "$pulumi_cli" preview --stack "$s" --policy-pack "$pack" --json --non-interactive >"$json" 2>>"$log"
    rc=$?
    if node -e 'process.exit(Array.isArray(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).steps) ? 0 : 1)' "$json" 2>/dev/null; then
      previews+=("$json")
    fi
    if [ "$rc" = 0 ]; then
      step "preview $s" passed "pulumi preview --policy-pack"
    else
      step "preview $s" failed "pulumi preview exited $rc; see preview-$s.log"
    fi
  done
fi

# 3. scan: the previews, the launch specs of every stack, and the paths given
launch_rc=0
tsx cli/scan/launch-specs.ts "$out/launch" "${stacks[@]}" >"$out/launch.log" 2>&1 || launch_rc=$?
if [ "$launch_rc" != 0 ]; then
  step "launch specs" failed "$(tail -n 1 "$out/launch.log")"
fi
targets=("$out/launch" "${previews[@]}" "${paths[@]}")
scan_rc=0
tsx cli/scan.ts --format sarif --output "$out/scan.sarif" "${targets[@]}" 2>"$out/scan.log" || scan_rc=$?
tsx cli/scan.ts --format json --output "$out/scan.json" "${targets[@]}" 2>/dev/null
verdict="$(tail -n 1 "$out/scan.log")"
case "$scan_rc" in
  0) step scan passed "$verdict" ;;
  1) step scan failed "$verdict" ;;
  *) step scan failed "bad input: $verdict" ;;
esac

# 4. summary
if tsx cli/scan/summary.ts "$steps" "$out/scan.json" >"$out/summary.md" 2>"$out/summary.log"; then
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"; fi
else
  echo "pr-checks: the summary could not be written; see $out/summary.log" >&2
  failed=1
fi
echo "pr-checks: wrote $out/scan.sarif, $out/scan.json and $out/summary.md" >&2

if [ "$scan_rc" -ge 2 ]; then exit 2; fi
exit "$failed"
