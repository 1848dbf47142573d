/**
 * The adversarial cases kept as data: `test/cases/<engine>/<engine-behaviour>.yaml`, each named by the engine
 * behaviour it exercises. A case file holds one or more documents:
 *
 *   behaviour: what the engine does (one sentence, the reason the verdict is what it is)
 *   files: { <relative path>: <text> }   the input, as a user would write it
 *   args: [<scan option>...]             optional: options of the scan (`--config pack.json` for a file above)
 *   assumes: <text>                      optional: an assumption the report must state
 *   want: passes | { rule: <rule id> } | { advisory: <rule id> }
 *                                        what `scan` must say: no finding that blocks; a blocking finding of that
 *                                        rule; a finding of that (advisory by default) rule that does not block;
 *         | { error: <text> }              an input error (exit 2) whose message holds the text
 *
 * Every case runs through `scan` as a user runs it (test/adversarial/harness.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { blocked, describeResult, passes, scanFiles, verdict } from "../adversarial/harness";

interface Case {
  readonly behaviour: string;
  readonly files: Record<string, string>;
  readonly args?: readonly string[];
  readonly assumes?: string;
  readonly want:
    | "passes"
    | { readonly rule: string }
    | { readonly advisory: string }
    | { readonly error: string };
}

function load(file: string): Case[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((d, i) => {
    const c = d.toJS() as Partial<Case>;
    if (typeof c.behaviour !== "string" || typeof c.files !== "object" || c.want === undefined)
      throw new Error(`${file}: case ${i + 1} needs behaviour, files and want`);
    return c as Case;
  });
}

async function judge(c: Case): Promise<void> {
  if (c.assumes !== undefined) {
    const r = await scanFiles(c.files, c.args ?? []);
    expect(JSON.stringify(r.report.assumptions), describeResult(r)).toContain(c.assumes);
  }
  if (c.want === "passes") {
    await verdict(c.files, passes, c.args);
    return;
  }
  if ("rule" in c.want) {
    await verdict(c.files, blocked(c.want.rule), c.args);
    return;
  }
  if ("error" in c.want) {
    const r = await scanFiles(c.files, c.args ?? []);
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.report.errors.map((e) => e.message).join("\n")).toContain(c.want.error);
    return;
  }
  const rule = c.want.advisory;
  const r = await verdict(c.files, passes, c.args);
  expect(
    r.report.findings.filter((f) => f.ruleId === rule && !f.unchecked).map((f) => f.level),
    describeResult(r),
  ).toEqual(["advisory"]);
}

for (const engine of readdirSync(__dirname, { withFileTypes: true }).filter((d) => d.isDirectory())) {
  describe(`cases: ${engine.name}`, () => {
    for (const f of readdirSync(join(__dirname, engine.name))
      .filter((n) => n.endsWith(".yaml"))
      .sort()) {
      const cases = load(join(__dirname, engine.name, f));
      it.each(cases.map((c) => [`${f}: ${c.behaviour}`, c] as const))("%s", async (_, c) => {
        await judge(c);
      });
    }
  });
}
