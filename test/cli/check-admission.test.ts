// `check` says what the ledger could never admit, with the arithmetic and the fix, before anything is deployed: a
// template whose one run costs more than the cap for runs, an agent whose own cap admits no run of a template.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { main } from "../../cli/main";

function root(budget: Record<string, unknown>, agents?: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "check-admission-"));
  mkdirSync(join(dir, "stacks"));
  writeFileSync(
    join(dir, "stacks", "Pulumi.w.yaml"),
    stringify({
      config: {
        "sandbox:name": "warned",
        "sandbox:jobRoot": join(dir, "jobs"),
        "sandbox:budget": { enforce: "metered", ...budget },
        ...(agents === undefined ? {} : { "sandbox:agents": agents }),
        "sandbox:templates": {
          long: { image: "sandbox-busybox:1", timeoutSeconds: 3600 },
          short: { image: "sandbox-busybox:1", timeoutSeconds: 60 },
        },
      },
    }),
  );
  return dir;
}

async function check(dir: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    ["check", "w", "--json"],
    { out: (t) => out.push(t), err: (t) => err.push(t) },
    dir,
  );
  return { code, doc: JSON.parse(out.join("")) as { ok: boolean; warnings: string[] } };
}

describe("check warns of launches the ledger can never admit", () => {
  it("names the template whose one run exceeds the cap for runs, and the agent whose cap admits no run", async () => {
    const r = await check(root({ monthlyCapUsd: 1, usdPerVcpuHour: 10 }, { tight: { monthlyCapUsd: 0.05 } }));
    expect(r.code).toBe(0);
    expect(r.doc.warnings).toEqual([
      expect.stringMatching(
        /^template long: one run may charge up to \$10\.01 \(its 3600 s deadline plus 5 s\), more than the cap for runs \$1\.00: the ledger can never admit it; raise sandbox:budget\.monthlyCapUsd/,
      ),
      expect.stringMatching(
        /^agent tight: its cap \$0\.05 admits no run of template short \(one run may charge up to \$0\.18\): raise sandbox:agents\.tight\.monthlyCapUsd/,
      ),
    ]);
  });

  it("says nothing when every template fits the cap and the agents' caps", async () => {
    const r = await check(root({ monthlyCapUsd: 50, usdPerVcpuHour: 10 }, { roomy: { monthlyCapUsd: 20 } }));
    expect(r.code).toBe(0);
    expect(r.doc.warnings).toEqual([]);
  });
});
