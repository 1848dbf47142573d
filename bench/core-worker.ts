/**
 * The rule core, alone in its process (so that its peak memory is its own): reads generated workloads, adapts and
 * judges each with every rule, `passes` times, and prints JSON: seconds per pass, checks per pass, the violations.
 *   node --import tsx bench/core-worker.ts <workloads.json> <passes>
 */
import { readFileSync } from "node:fs";
import { ALL_RULES, judge } from "../policy/rules/registry";
import { adaptResource } from "../policy/sources/subject";
import { typeOf } from "./workloads";

const [file = "", passesArg = "5"] = process.argv.slice(2);
const items = (JSON.parse(readFileSync(file, "utf8")) as { items: Record<string, unknown>[] }).items;
const passes = Number(passesArg);
const times: number[] = [];
let checks = 0;
const pairs = new Set<string>();
for (let pass = 0; pass <= passes; pass++) {
  const start = process.hrtime.bigint();
  checks = 0;
  for (const m of items) {
    const name = String((m.metadata as { name: string }).name);
    const subject = adaptResource(typeOf(m), m, name);
    if (subject === undefined) continue;
    for (const { rule, findings } of judge(subject, ALL_RULES)) {
      checks++;
      if (pass === 0) for (const f of findings) if (!f.unchecked) pairs.add(`${name}\0${rule.id}`);
    }
  }
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  if (pass > 0) times.push(s); // pass 0 warms the JIT up
}
process.stdout.write(
  JSON.stringify({ times, checks, workloads: items.length, rules: ALL_RULES.length, pairs: [...pairs] }),
);
