/**
 * Benchmark: `scan` on a folder of 1,000 manifests, end to end as a user runs it (the installed package's compiled
 * `sandbox-scan` reading and parsing every file, judging, writing the JSON report), against `opa eval` loading the
 * same folder and evaluating the equivalent Rego (bench/peer/sandbox.rego), side by side in the same run,
 * alternating, median of `runs`; the checkout's `tsx cli/scan.ts` is timed beside them for reference.
 * Builds the package into dist/ first (scripts/build-package.mjs).
 *   node --import tsx bench/scan.ts [manifests=1000] [runs=3]
 * One manifest per file, each in its own folder, so that OPA loads each as one data document. Not a test.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { ScanReport } from "../policy/report/model";
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
  type Timed,
  timed,
} from "./common";
import { workloads } from "./workloads";

const n = Number(process.argv[2] ?? 1000);
const runs = Number(process.argv[3] ?? 3);
const opa = opaBinary();
const dir = mkdtempSync(join(tmpdir(), "sandbox-bench-scan-"));
const folder = join(dir, "manifests");
workloads(n, 17).forEach((m, i) => {
  const sub = join(folder, String(i).padStart(4, "0"));
  mkdirSync(sub, { recursive: true });
  writeFileSync(join(sub, "workload.yaml"), stringify(m));
});
const empty = join(dir, "empty");
mkdirSync(empty);

const node = join(ROOT, "node_modules", ".bin", "node");
const build = spawnSync(node, [join(ROOT, "scripts", "build-package.mjs")], {
  stdio: ["ignore", "ignore", "inherit"],
});
if (build.status !== 0) throw new Error("the package build failed");
const scanArgs = (target: string) => [
  join(ROOT, "dist", "cli", "bin", "sandbox-scan.js"),
  "--format",
  "json",
  target,
];
const checkoutArgs = (target: string) => [
  "--import",
  "tsx",
  join(ROOT, "cli", "scan.ts"),
  "--format",
  "json",
  target,
];
const ours: Timed[] = [];
const peer: Timed[] = [];
const checkout: Timed[] = [];
timed(node, scanArgs(folder), [0, 1]); // warms the page cache for both
timed(node, checkoutArgs(folder), [0, 1]); // and tsx's compile cache
for (let i = 0; i < runs; i++) {
  ours.push(timed(node, scanArgs(folder), [0, 1]));
  peer.push(timed(opa, ["eval", "-d", REGO, "-d", dir, "--format", "json", "data.sandbox.violation"]));
  checkout.push(timed(node, checkoutArgs(folder), [0, 1]));
}
const startup = median([0, 1, 2].map(() => timed(node, scanArgs(empty), [0]).seconds));

const report = JSON.parse(ours[0]?.stdout ?? "{}") as ScanReport;
const ourPairs: Pairs = new Set(
  report.findings.filter((f) => !f.unchecked).map((f) => `${f.resource.name}\0${f.ruleId}`),
);
const result = JSON.parse(peer[0]?.stdout ?? "{}") as {
  result: { expressions: { value: { id: string; rule: string }[] }[] }[];
};
const peerPairs: Pairs = new Set(
  (result.result[0]?.expressions[0]?.value ?? []).map((v) => `${v.id}\0${v.rule}`),
);
const rules = regoRuleIds();

const oursS = median(ours.map((t) => t.seconds));
const peerS = median(peer.map((t) => t.seconds));
const oursM = median(ours.map((t) => t.maxRssMiB));
const peerM = median(peer.map((t) => t.maxRssMiB));
console.log(
  `scan of a folder of ${fmt(n, 0)} manifests (node ${process.versions.node}, OPA v${OPA_VERSION}), median of ${runs}`,
);
console.log(
  `  ours : sandbox-scan --format json: ${fmt(oursS, 2)} s (${fmt(startup, 2)} s of it start-up on an empty folder), ` +
    `${fmt(n / oursS, 0)} manifests/s, ${fmt(n / Math.max(oursS - startup, 1e-3), 0)} manifests/s after start-up, ` +
    `peak RSS ${fmt(oursM)} MiB, ${report.resources.length} resources judged, ${report.summary.mandatory} mandatory findings`,
);
console.log(
  `  OPA  : opa eval -d <folder>: ${fmt(peerS, 2)} s, ${fmt(n / peerS, 0)} manifests/s, peak RSS ${fmt(peerM)} MiB, ` +
    `${peerPairs.size} (workload, rule) violations`,
);
console.log(
  `  checkout (tsx cli/scan.ts, for reference): ${fmt(median(checkout.map((t) => t.seconds)), 2)} s, peak RSS ${fmt(median(checkout.map((t) => t.maxRssMiB)))} MiB`,
);
console.log(`  ${ratio("wall time ours ÷ OPA", oursS, peerS, false)}`);
console.log(`  ${ratio("peak RSS ours ÷ OPA", oursM, peerM, false)}`);
console.log(`  ${agreement(ourPairs, peerPairs, rules)}`);
for (const d of disagreements(ourPairs, peerPairs, rules)) console.log(`    ${d}`);
