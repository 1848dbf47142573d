// The off switch's plain path (cli/destroy.ts) drives the Pulumi CLI without the Pulumi SDK, which costs the front
// about a second to load: loading the front and the direct destroy must load no module of @pulumi/pulumi.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = join(__dirname, "../..");

function loaded(...modules: string[]): string[] {
  const script = `${modules.map((m) => `require(${JSON.stringify(join(REPO, m))});`).join("")}process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], { cwd: REPO, encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as string[];
}

const sdk = (files: readonly string[]) => files.filter((f) => f.includes("/node_modules/@pulumi/pulumi/"));

describe("the direct destroy loads no Pulumi SDK", () => {
  it("cli/main.ts, cli/destroy.ts and what they import need none of @pulumi/pulumi", () => {
    const files = loaded("cli/main.ts", "cli/destroy.ts");
    expect(files.some((f) => f.endsWith("cli/destroy.ts"))).toBe(true);
    expect(files.some((f) => f.endsWith("cli/engine-run.ts"))).toBe(true);
    expect(sdk(files)).toEqual([]);
  });

  it("the Automation API's path does load it (the check above can see the SDK)", () => {
    expect(sdk(loaded("cli/engine.ts")).length).toBeGreaterThan(0);
  });
});
