// A refused `up` changes nothing: the pack's stack rules judge the whole new graph only at the end of an engine run,
// so the front's `up` previews with the pack first and stops there. The pack here is the project's own, plus one
// stack rule of this test (mandatory: no template named "second"), which the front's check does not know: only the
// pack can refuse. Real Pulumi engine, real Docker engine; a throwaway root (front-root.ts).
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offSwitch } from "../../runtime/offSwitch";
import { requireDocker } from "../helpers/docker";
import { type FrontRoot, frontRoot, REPO } from "./front-root";

let docker: Dockerode;
let f: FrontRoot;
const stack = `pf${Math.random().toString(36).slice(2, 6)}`;

/** The project's pack with one stack rule more, in the root's own policy folder (the rest links to the checkout's). */
function packWithStackRule(root: string): void {
  const folder = join(root, "policy");
  rmSync(folder, { force: true, recursive: true });
  mkdirSync(folder);
  for (const entry of readdirSync(join(REPO, "policy"))) {
    if (entry !== "index.ts") symlinkSync(join(REPO, "policy", entry), join(folder, entry));
  }
  writeFileSync(
    join(folder, "index.ts"),
    [
      'import { PolicyPack } from "@pulumi/policy";',
      `import { PACK_NAME, packArgs } from ${JSON.stringify(join(REPO, "policy", "pulumi", "pack"))};`,
      "const args = packArgs();",
      "new PolicyPack(PACK_NAME, {",
      "  ...args,",
      "  policies: [",
      "    ...args.policies,",
      "    {",
      '      name: "test-no-second-template",',
      '      description: "This test\'s stack rule: no template named second.",',
      '      enforcementLevel: "mandatory",',
      "      validateStack: (stack, report) => {",
      "        for (const r of stack.resources)",
      '          if (r.name.endsWith("-second")) report("template second is refused by this test", r.urn);',
      "      },",
      "    },",
      "  ],",
      "});",
      "",
    ].join("\n"),
  );
}

/** Every object of the project on the engine, by name. */
async function objects(): Promise<string[]> {
  const label = { label: [`sandbox.project=${f.project}`] };
  const c = await docker.listContainers({ all: true, filters: label });
  const n = await docker.listNetworks({ filters: label });
  const v = (await docker.listVolumes({ filters: label })).Volumes ?? [];
  return [
    ...c.map((x) => x.Names[0]?.slice(1) ?? x.Id),
    ...n.map((x) => x.Name),
    ...v.map((x) => x.Name),
  ].sort();
}

beforeAll(async () => {
  docker = await requireDocker();
  f = frontRoot("pfirst");
  packWithStackRule(f.root);
  f.writeStack(stack);
});

afterAll(async () => {
  if (f !== undefined) {
    await f.run("destroy", stack, "--yes");
    if (docker) await offSwitch(docker, f.project, { jobRoot: `${f.root}/jobs` });
    f.cleanup();
  }
});

describe("up judges the stack rules before any step", () => {
  it("refuses on the preview and creates, changes and deletes nothing; the fixed config passes the first time", async () => {
    const first = await f.run("up", stack);
    expect(first.code, first.err).toBe(0);
    const before = await objects();
    expect(before).toContain(`${f.project}-net`);

    // A second template, which only the pack's stack rule refuses (the front's check passes it).
    const file = join(f.root, "stacks", `Pulumi.${stack}.yaml`);
    const original = readFileSync(file, "utf8");
    writeFileSync(
      file,
      original.replace(
        "      timeoutSeconds: 120\n",
        "      timeoutSeconds: 120\n    second:\n      image: sandbox-busybox:1\n      timeoutSeconds: 60\n",
      ),
    );
    expect((await f.run("check", stack)).code).toBe(0);
    const refused = await f.run("up", stack);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      `up of stack ${stack} was refused by the policy pack on its preview, before any step: nothing was created, changed or deleted:`,
    );
    expect(refused.err).toContain(`${f.project}-second (sandbox TaskTemplate): test-no-second-template:`);
    expect(refused.err).not.toMatch(/^ {2}created /m);
    expect(await objects()).toEqual(before);
    expect((await objects()).filter((o) => o.includes("second"))).toEqual([]);

    // The fix: the template goes. It passes at once and the stack is as it was.
    writeFileSync(file, original);
    const fixed = await f.run("up", stack);
    expect(fixed.code, fixed.err).toBe(0);
    expect(fixed.out).toContain(`${stack} is up:`);
    expect(await objects()).toEqual(before);
  });
});
