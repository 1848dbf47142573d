/**
 * Benchmark: the rule core on 10,000 generated workloads (checks per second, peak memory), against OPA running the
 * equivalent Rego (bench/peer/sandbox.rego) over the same workloads, side by side in the same run.
 *   node --import tsx bench/rules.ts [workloads=10000] [passes=5]
 * Ours: adapt + judge every workload with every rule, in one process (median of `passes` passes after a warm-up).
 * Peer: `opa bench` of the same query over the same input (Go's benchmark loop; ns/op, B/op), and `opa eval` once
 * for its findings. Memory is each process's peak RSS (GNU time). Not a test: it prints, it asserts nothing.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  agreement,
  disagreements,
  fmt,
  median,
  OPA_VERSION,
  opaBinary,
  type Pairs,
  REGO,
  ROOT,
  ratio,
  regoRuleIds,
  timed,
} from "./common";
import { workloads } from "./workloads";

const n = Number(process.argv[2] ?? 10_000);
const passes = Number(process.argv[3] ?? 5);
const opa = opaBinary();
const dir = mkdtempSync(join(tmpdir(), "sandbox-bench-rules-"));
const input = join(dir, "workloads.json");
writeFileSync(input, JSON.stringify({ items: workloads(n) }));

// Ours.
const node = join(ROOT, "node_modules", ".bin", "node");
const run = timed(node, ["--import", "tsx", join(ROOT, "bench", "core-worker.ts"), input, String(passes)]);
const core = JSON.parse(run.stdout) as { times: number[]; checks: number; rules: number; pairs: string[] };
const oursSeconds = median(core.times);
const oursChecksPerSecond = core.checks / oursSeconds;

// The peer.
const bench = timed(opa, [
  "bench",
  "-d",
  REGO,
  "-i",
  input,
  "--format",
  "json",
  "--benchmem",
  "data.sandbox.violation",
]);
const b = JSON.parse(bench.stdout) as { N: number; T: number; ns_per_op?: number; bytes_per_op?: number };
const nsPerOp = b.ns_per_op ?? b.T / b.N;
const peerSeconds = nsPerOp / 1e9;
const evald = timed(opa, ["eval", "-d", REGO, "-i", input, "--format", "json", "data.sandbox"]);
const result = JSON.parse(evald.stdout) as {
  result: { expressions: { value: { violation: { id: string; rule: string }[]; rules: string[] } }[] }[];
};
const value = result.result[0]?.expressions[0]?.value;
const peerPairs: Pairs = new Set((value?.violation ?? []).map((v) => `${v.id}\0${v.rule}`));
const regoRules = regoRuleIds();
const peerChecks = n * regoRules.size;

console.log(
  `rule core on ${fmt(n, 0)} generated workloads (node ${process.versions.node}, OPA v${OPA_VERSION})`,
);
console.log(
  `  ours : ${core.rules} rules, ${fmt(oursSeconds * 1000)} ms per pass (median of ${passes}), ` +
    `${fmt(n / oursSeconds, 0)} workloads/s, ${fmt(oursChecksPerSecond, 0)} rule checks/s, peak RSS ${fmt(run.maxRssMiB)} MiB`,
);
console.log(
  `  OPA  : ${regoRules.size} rules in Rego, ${fmt(peerSeconds * 1000)} ms per evaluation (opa bench, N=${b.N}), ` +
    `${fmt(n / peerSeconds, 0)} workloads/s, ${fmt(peerChecks / peerSeconds, 0)} rule checks/s, ` +
    `${b.bytes_per_op === undefined ? "" : `${fmt(b.bytes_per_op / 2 ** 20)} MiB allocated per evaluation, `}peak RSS ${fmt(bench.maxRssMiB)} MiB`,
);
console.log(`  ${ratio("workloads/s ours ÷ OPA", n / oursSeconds, n / peerSeconds, true)}`);
console.log(`  ${ratio("rule checks/s ours ÷ OPA", oursChecksPerSecond, peerChecks / peerSeconds, true)}`);
console.log(`  ${ratio("peak RSS ours ÷ OPA", run.maxRssMiB, bench.maxRssMiB, false)}`);
console.log(`  ${agreement(new Set(core.pairs), peerPairs, regoRules)}`);
for (const d of disagreements(new Set(core.pairs), peerPairs, regoRules)) console.log(`    ${d}`);
