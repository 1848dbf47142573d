// The checkout front's choice between the package build and tsx (toolchain/front.cjs): a build is run only while
// every file it was made from is as the build recorded it, and a build during which a source changed is never
// recorded as fresh.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const front = require("../../toolchain/front.cjs") as {
  sourceSnapshot: (root: string) => string[];
  recordBuild: (root: string, out: string, before: readonly string[]) => boolean;
  freshBuild: (root: string) => boolean;
};

let root: string;
const write = (file: string, text: string) => {
  mkdirSync(join(root, file, ".."), { recursive: true });
  writeFileSync(join(root, file), text);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "sandbox-front-build-"));
  write("index.ts", "export {};\n");
  write("cli/main.ts", "export const a = 1;\n");
  write("runtime/launcher.ts", "export const b = 2;\n");
  write("tsconfig.json", "{}\n");
  mkdirSync(join(root, "dist"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("the front's fresh-build check", () => {
  it("records the sources, and no longer takes the build as fresh once one changes", () => {
    expect(front.sourceSnapshot(root).map((l) => l.split(" ")[0])).toEqual(
      expect.arrayContaining(["cli/main.ts", "index.ts", "runtime/launcher.ts", "tsconfig.json"]),
    );
    expect(front.freshBuild(root)).toBe(false);
    expect(front.recordBuild(root, join(root, "dist"), front.sourceSnapshot(root))).toBe(true);
    expect(front.freshBuild(root)).toBe(true);
    write("runtime/launcher.ts", "export const b = 3;\n");
    expect(front.freshBuild(root)).toBe(false);
  });

  it("sees a change that keeps the size, by the modification time", () => {
    front.recordBuild(root, join(root, "dist"), front.sourceSnapshot(root));
    utimesSync(join(root, "cli/main.ts"), new Date(), new Date(Date.now() + 5000));
    expect(front.freshBuild(root)).toBe(false);
  });

  it("takes a recorded source that was removed as a change", () => {
    front.recordBuild(root, join(root, "dist"), front.sourceSnapshot(root));
    rmSync(join(root, "cli/main.ts"));
    expect(front.freshBuild(root)).toBe(false);
  });

  it("records nothing when a source changed while the build ran", () => {
    const before = front.sourceSnapshot(root);
    write("cli/main.ts", "export const a = 10;\n");
    expect(front.recordBuild(root, join(root, "dist"), before)).toBe(false);
    expect(front.freshBuild(root)).toBe(false);
  });
});
