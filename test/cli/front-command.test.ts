// Hints name the command the person started: `./sandbox` in a checkout, `npx sandbox` from the installed package
// (cli/front-command.ts), and the installed pack's Node is judged before the engine starts (cli/engine-env.ts).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { packNodeProblem } from "../../cli/engine-env";
import { asStarted, setFrontCommand } from "../../cli/front-command";
import { main } from "../../cli/main";

afterEach(() => setFrontCommand(false, {}));

describe("hints worded for the way the front was started", () => {
  it("says ./sandbox in a checkout and npx sandbox where the toolkit is installed", () => {
    setFrontCommand(false, {});
    expect(asStarted("run `./sandbox up dev` again")).toBe("run `./sandbox up dev` again");
    setFrontCommand(true, {});
    expect(asStarted("run `./sandbox up dev` again; then `./sandbox off dev`")).toBe(
      "run `npx sandbox up dev` again; then `npx sandbox off dev`",
    );
    setFrontCommand(true, { SANDBOX_FRONT_COMMAND: "make sandbox --" });
    expect(asStarted("`./sandbox check dev`")).toBe("`make sandbox -- check dev`");
  });

  it("words a refusal's hint through the front as started (the broker's credential: config set)", async () => {
    const root = mkdtempSync(join(tmpdir(), "front-command-"));
    mkdirSync(join(root, "stacks"));
    writeFileSync(
      join(root, "stacks", "Pulumi.dev.yaml"),
      stringify({
        config: {
          "sandbox:name": "worded",
          "sandbox:budget": { monthlyCapUsd: 10 },
          "sandbox:broker": {
            routes: {
              api: {
                upstream: "https://api.example.com",
                paths: ["/v1/*"],
                credential: { secret: "apiKey" },
              },
            },
          },
          "sandbox:templates": { default: { image: "sandbox-busybox:1", broker: ["api"] } },
        },
      }),
    );
    const run = async (env: NodeJS.ProcessEnv) => {
      const out: string[] = [];
      const saved = process.env.SANDBOX_FRONT_COMMAND;
      if (env.SANDBOX_FRONT_COMMAND !== undefined)
        process.env.SANDBOX_FRONT_COMMAND = env.SANDBOX_FRONT_COMMAND;
      try {
        const code = await main(
          ["check", "dev", "--json"],
          { out: (t) => out.push(t), err: () => undefined },
          root,
        );
        return { code, doc: JSON.parse(out.join("")) as { error: { message: string } } };
      } finally {
        if (saved === undefined) delete process.env.SANDBOX_FRONT_COMMAND;
        else process.env.SANDBOX_FRONT_COMMAND = saved;
      }
    };
    const checkout = await run({});
    expect(checkout.code).toBe(2);
    expect(checkout.doc.error.message).toContain("`./sandbox config set <stack> sandbox:apiKey --secret`");
    const installed = await run({ SANDBOX_FRONT_COMMAND: "npx sandbox" });
    expect(installed.doc.error.message).toContain("`npx sandbox config set <stack> sandbox:apiKey --secret`");
    expect(installed.doc.error.message).not.toContain("./sandbox");
  });
});

describe("the installed policy pack's Node", () => {
  it("is judged only for the installed package, by SANDBOX_NODE or the running Node", () => {
    expect(packNodeProblem(false, { SANDBOX_NODE: "/nowhere/node" })).toBeUndefined();
    // The Node running this test is 22 or later (the project's own).
    expect(packNodeProblem(true, {})).toBeUndefined();
    expect(packNodeProblem(true, { SANDBOX_NODE: process.execPath })).toBeUndefined();
  });

  it("names SANDBOX_NODE and its version when it is older than 22, and when it does not run", () => {
    const dir = mkdtempSync(join(tmpdir(), "old-node-"));
    const old = join(dir, "node");
    writeFileSync(old, "#!/bin/sh\necho 20.19.2\n", { mode: 0o755 });
    const said = packNodeProblem(true, { SANDBOX_NODE: old });
    expect(said).toContain(`SANDBOX_NODE=${JSON.stringify(old)} is Node 20.19.2`);
    expect(said).toContain("needs Node 22 or later");
    expect(said).toContain("set SANDBOX_NODE to a Node 22+ binary");
    const missing = packNodeProblem(true, { SANDBOX_NODE: join(dir, "absent") });
    expect(missing).toMatch(/SANDBOX_NODE=".*absent" does not run/);
  });
});
