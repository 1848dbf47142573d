// The ledger's witness (runtime/ledger/witness.ts): a ledger deleted, emptied or replaced, or a second ledger of the
// same project, is refused by every verb that meters or reports, never metered from zero; `ledger reset` starts a
// new one on purpose. Through the front (`spend`, `ledger reset`) and the opener the task verbs use.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { openProjectLedger } from "../../cli/ledger";
import { ledgerFile } from "../../cli/ledger-file";
import { loadStack, main } from "../../cli/main";
import type { ResolvedProject } from "../../components/model";
import { Ledger, meterOf } from "../../runtime/ledger";
import { LedgerGone, witnessPath } from "../../runtime/ledger/witness";

let root: string;
let project: ResolvedProject;
let file: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "sandbox-witness-"));
  const jobRoot = join(root, "jobs");
  mkdirSync(join(root, "stacks"));
  writeFileSync(
    join(root, "stacks", "Pulumi.w.yaml"),
    stringify({
      config: {
        "sandbox:name": "witnessed",
        "sandbox:jobRoot": jobRoot,
        "sandbox:budget": { monthlyCapUsd: 5, enforce: "metered", maxConcurrentTasks: 2 },
        "sandbox:templates": { default: { image: "sandbox-busybox:1" } },
      },
    }),
  );
  project = loadStack(root, "w");
  file = ledgerFile(project, {});
});

async function front(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) }, root);
  return { code, out: out.join(""), err: err.join("") };
}

/** The project's ledger with one finished run in it, opened as the task verbs open it. */
async function meteredOnce(): Promise<string> {
  const ledger = await openProjectLedger(file, project);
  try {
    await ledger.admit({
      id: "r1",
      template: "default",
      specHash: "h",
      command: ["true"],
      container: "c1",
      size: { vcpu: 1, memoryMb: 512 },
      maxSeconds: 600,
    });
    await ledger.complete("r1", { exitCode: 0 });
    return await ledger.id();
  } finally {
    await ledger.close();
  }
}

describe("the ledger's witness", () => {
  it("the first ledger a project meets is witnessed outside its file, and opens again", async () => {
    const id = await meteredOnce();
    expect(existsSync(witnessPath(project.jobRoot))).toBe(true);
    const again = await openProjectLedger(file, project);
    expect(await again.id()).toBe(id);
    expect(await again.runs()).toHaveLength(1);
    await again.close();
  });

  it.each([
    ["deleted", () => rmSync(file), /is gone: .* does not exist/],
    ["emptied", () => writeFileSync(file, ""), /was emptied: .* holds nothing/],
    [
      "replaced by another ledger",
      () => {
        const other = join(root, "other.sqlite");
        Ledger.open(other, meterOf(project)).close();
        for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
        copyFileSync(other, file);
      },
      /was replaced: .* holds another ledger, made anew/,
    ],
  ])(
    "a ledger %s is refused, never metered from zero, and nothing is made in its place",
    async (_what, attack, says) => {
      await meteredOnce();
      attack();
      const before = existsSync(file);
      await expect(openProjectLedger(file, project)).rejects.toThrow(LedgerGone);
      await expect(openProjectLedger(file, project)).rejects.toThrow(says);
      expect(existsSync(file)).toBe(before);
    },
  );

  it("a second checkout's ledger of the same project is noticed; the first stays the witnessed one", async () => {
    await meteredOnce();
    const elsewhere = mkdtempSync(join(tmpdir(), "sandbox-second-"));
    const second = join(elsewhere, "ledger.sqlite");
    const warned: string[] = [];
    await (await openProjectLedger(second, project, {}, (t) => warned.push(t))).close();
    expect(warned).toEqual([
      expect.stringMatching(
        /^warning: project witnessed is also metered by the ledger at .* keeps books of its own, so each holds the cap for its own runs only/,
      ),
    ]);
    rmSync(file);
    await expect(openProjectLedger(file, project)).rejects.toThrow(/is gone/);
  });

  it("a ledger moved with its checkout is the same ledger: the witness follows it", async () => {
    await meteredOnce();
    const moved = join(mkdtempSync(join(tmpdir(), "sandbox-moved-")), "moved.sqlite");
    copyFileSync(file, moved);
    rmSync(file);
    const warned: string[] = [];
    const m = await openProjectLedger(moved, project, {}, (t) => warned.push(t));
    expect(await m.runs()).toHaveLength(1);
    await m.close();
    expect(warned).toEqual([]);
    // The witness names the moved file now: deleting it is refused.
    rmSync(moved);
    await expect(openProjectLedger(moved, project)).rejects.toThrow(/is gone/);
  });

  it("through the front: spend refuses a deleted ledger (exit 1); ledger reset starts a new one on purpose", async () => {
    await meteredOnce();
    expect((await front("spend", "w", "--json")).code).toBe(0);
    rmSync(file);
    const refused = await front("spend", "w");
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      /^the ledger of project witnessed .* is gone: .*`sandbox ledger reset <stack>`\n$/,
    );
    expect(existsSync(file)).toBe(false);
    // A person who answers no changes nothing; --yes starts the new ledger.
    const declined = await main(
      ["ledger", "reset", "w"],
      { out: () => undefined, err: () => undefined, ask: async () => "n" },
      root,
    );
    expect(declined).toBe(2);
    expect((await front("spend", "w")).code).toBe(1);
    const reset = await front("ledger", "reset", "w", "--yes");
    expect(reset.code).toBe(0);
    expect(reset.out).toMatch(
      /^project witnessed: the ledger .* \(0 runs\) is the one it is metered with from now on/,
    );
    const spend = await front("spend", "w", "--json");
    expect(spend.code).toBe(0);
    expect(JSON.parse(spend.out)).toMatchObject({ ok: true, spend: { spentUsd: 0 } });
    expect((await front("ledger", "reset")).code).toBe(2);
  });
});
