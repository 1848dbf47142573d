// The off switch verb loads only what removes (cli/off.ts): not the launcher, nor the policy's rules, which every
// other task verb needs. Seen in a fresh Node process's module cache, on an engine that is not there (the verb loads
// all it needs, then says no engine answers); `run` beside it is the control that the check can see them.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const REPO = join(__dirname, "../..");
const root = mkdtempSync(join(tmpdir(), "sandbox-off-light-"));
mkdirSync(join(root, "stacks"));
writeFileSync(
  join(root, "stacks", "Pulumi.t.yaml"),
  [
    "config:",
    "  sandbox:name: offl",
    `  sandbox:jobRoot: ${join(root, "jobs")}`,
    "  sandbox:budget:",
    "    monthlyCapUsd: 100",
    "  sandbox:templates:",
    "    default:",
    "      image: busybox:1",
    "",
  ].join("\n"),
);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const HEAVY = ["runtime/launcher.ts", "runtime/preflight.ts", "policy/evaluate.ts"];

/** The verb's exit code and which of {@link HEAVY} it loaded. */
function loaded(argv: string[]): { code: number; heavy: string[] } {
  const script = `
    const { main } = require(${JSON.stringify(join(REPO, "cli/main.ts"))});
    main(${JSON.stringify(argv)}, { out: () => undefined, err: () => undefined }, ${JSON.stringify(root)}).then((code) => {
      const heavy = ${JSON.stringify(HEAVY)}.filter((f) => Object.keys(require.cache).some((k) => k.endsWith(f)));
      process.stdout.write(JSON.stringify({ code, heavy }));
    });`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
    cwd: REPO,
    encoding: "utf8",
    env: { ...process.env, DOCKER_HOST: `unix://${join(root, "no-engine.sock")}`, SANDBOX_DOCKER_STAMP: "" },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as { code: number; heavy: string[] };
}

describe("the off switch verb", () => {
  it("loads neither the launcher nor the policy's rules", () => {
    expect(loaded(["off", "t", "--yes"])).toEqual({ code: 3, heavy: [] });
  }, 60_000);

  it("control: run loads them, and the check above sees them", () => {
    expect(loaded(["run", "t", "default", "--", "true"])).toEqual({ code: 3, heavy: HEAVY });
  }, 60_000);
});
