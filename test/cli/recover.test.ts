import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { directDestroyable } from "../../cli/destroy";
import { removeTornAttrs, tornAttrs } from "../../cli/recover";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function stateWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "recover-"));
  dirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    const file = join(root, ".pulumi", rel);
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, text);
  }
  return root;
}

describe("removeTornAttrs (an engine killed between a blob and its .attrs)", () => {
  it("removes empty and cut attribute files of the stack and keeps whole ones", () => {
    const root = stateWith({
      "stacks/sandbox/dev.json": "{}",
      "stacks/sandbox/dev.json.attrs": "",
      "stacks/sandbox/dev.json.bak.attrs": '{"user.content_type":"app',
      "history/sandbox/dev/dev-1.history.json.attrs": '{"user.content_type":"application/json"}\n',
      "locks/organization/sandbox/dev/x.json.attrs": "",
    });
    const removed = removeTornAttrs(root, "sandbox", "dev")
      .map((f) => f.slice(root.length + 9))
      .sort();
    expect(removed).toEqual([
      "locks/organization/sandbox/dev/x.json.attrs",
      "stacks/sandbox/dev.json.attrs",
      "stacks/sandbox/dev.json.bak.attrs",
    ]);
    expect(readdirSync(join(root, ".pulumi/stacks/sandbox")).sort()).toEqual(["dev.json"]);
    expect(readdirSync(join(root, ".pulumi/history/sandbox/dev"))).toEqual(["dev-1.history.json.attrs"]);
  });

  it("leaves other stacks' files alone, torn or not", () => {
    const root = stateWith({
      "stacks/sandbox/prod.json.attrs": "",
      "stacks/sandbox/dev.json.attrs": "",
    });
    expect(removeTornAttrs(root, "sandbox", "dev")).toHaveLength(1);
    expect(readdirSync(join(root, ".pulumi/stacks/sandbox"))).toEqual(["prod.json.attrs"]);
  });

  it("finds nothing in a state folder that does not exist", () => {
    expect(removeTornAttrs(join(tmpdir(), "no-such-state-folder-xyz"), "sandbox", "dev")).toEqual([]);
  });
});

describe("directDestroyable (the off switch drives the CLI only when there is nothing to recover)", () => {
  const checkpoint = (pending: unknown[] = []) =>
    JSON.stringify({ version: 3, checkpoint: { latest: { resources: [], pending_operations: pending } } });
  // A pid no process has: the kernel's limit is below it.
  const deadPid = 2 ** 22 + 7;

  it("takes a plain checkpoint of the stack, in the project-scoped and the legacy layout", () => {
    expect(directDestroyable(stateWith({ "stacks/sandbox/dev.json": checkpoint() }), "dev")).toBe(true);
    expect(directDestroyable(stateWith({ "stacks/dev.json": checkpoint() }), "dev")).toBe(true);
  });

  it("leaves to the Automation API a stack never created here, another stack's checkpoint and a qualified name", () => {
    expect(directDestroyable(stateWith({ "stacks/sandbox/prod.json": checkpoint() }), "dev")).toBe(false);
    expect(directDestroyable(join(tmpdir(), "no-such-state-folder-xyz"), "dev")).toBe(false);
    expect(directDestroyable(stateWith({ "stacks/sandbox/dev.json": checkpoint() }), "org/dev")).toBe(false);
  });

  it("leaves to the Automation API every run to recover: a torn file, a dead run's lock, a pending operation", () => {
    const torn = stateWith({ "stacks/sandbox/dev.json": checkpoint(), "stacks/sandbox/dev.json.attrs": "" });
    expect(directDestroyable(torn, "dev")).toBe(false);
    // Judging removes nothing: the recovery that follows reports what it removes.
    expect(tornAttrs(torn, "sandbox", "dev")).toHaveLength(1);
    const lock = JSON.stringify({ pid: deadPid, hostname: hostname() });
    expect(
      directDestroyable(
        stateWith({ "stacks/sandbox/dev.json": checkpoint(), "locks/organization/sandbox/dev/l.json": lock }),
        "dev",
      ),
    ).toBe(false);
    const pending = [
      { type: "creating", resource: { urn: "urn:pulumi:dev::sandbox::docker:index/network:Network::n" } },
    ];
    expect(directDestroyable(stateWith({ "stacks/sandbox/dev.json": checkpoint(pending) }), "dev")).toBe(
      false,
    );
    expect(directDestroyable(stateWith({ "stacks/sandbox/dev.json": "{not json" }), "dev")).toBe(false);
  });

  it("takes a stack whose lock belongs to a live run: the engine itself then says who holds it", () => {
    const lock = JSON.stringify({ pid: process.pid, hostname: hostname() });
    const root = stateWith({
      "stacks/sandbox/dev.json": checkpoint(),
      "locks/organization/sandbox/dev/l.json": lock,
    });
    expect(directDestroyable(root, "dev")).toBe(true);
  });
});
