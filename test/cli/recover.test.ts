import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeTornAttrs } from "../../cli/recover";

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
