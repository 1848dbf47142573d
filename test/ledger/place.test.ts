// Where a project's ledger lives: one file per project on the machine (beside its job root), whichever checkout or
// launcher meters it; moved by `sandbox:ledger.file` or `SANDBOX_LEDGER`; and a library launcher must be given one.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ledgerFile } from "../../cli/ledger-file";
import { main } from "../../cli/main";
import { dockerClient } from "../../runtime/docker/client";
import { Launcher } from "../../runtime/launcher";
import { Ledger, meterOf } from "../../runtime/ledger";
import { defaultLedgerFile, openLedger } from "../../runtime/ledger/open";
import { policyPreflight } from "../../runtime/preflight";
import { projectFromConfig } from "../../stacks/config";

/** A checkout of its own (a root with stacks/Pulumi.<stack>.yaml) of project `name` with job root `jobRoot`. */
function checkout(name: string, jobRoot: string, more: Record<string, unknown> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "ledger-place-"));
  mkdirSync(join(root, "stacks"));
  writeFileSync(
    join(root, "stacks", "Pulumi.p.yaml"),
    stringify({
      config: {
        "sandbox:name": name,
        "sandbox:jobRoot": jobRoot,
        "sandbox:budget": { monthlyCapUsd: 5, enforce: "metered", maxConcurrentTasks: 2 },
        "sandbox:templates": { default: { image: "sandbox-busybox:1" } },
        ...more,
      },
    }),
  );
  return root;
}

async function front(root: string, env: NodeJS.ProcessEnv, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) }, root);
    return { code, out: out.join(""), err: err.join("") };
  } finally {
    for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

describe("the ledger's place", () => {
  it("is beside the job root by default, the config's file when set, and SANDBOX_LEDGER over both", async () => {
    expect(ledgerFile({ jobRoot: "/var/lib/sandbox-projects/p" }, {})).toBe(
      "/var/lib/sandbox-projects/p.ledger.sqlite",
    );
    expect(ledgerFile({ jobRoot: "/srv/jobs/" }, {})).toBe("/srv/jobs.ledger.sqlite");
    expect(ledgerFile({ jobRoot: "/srv/jobs", file: "/books/p.sqlite" }, {})).toBe("/books/p.sqlite");
    expect(
      ledgerFile({ jobRoot: "/srv/jobs", file: "/books/p.sqlite" }, { SANDBOX_LEDGER: "/e/l.sqlite" }),
    ).toBe("/e/l.sqlite");
    expect(defaultLedgerFile("/srv/jobs")).toBe("/srv/jobs.ledger.sqlite");
  });

  it("is one book for two checkouts of the same project: a run recorded from one is read by the other", async () => {
    const jobs = join(mkdtempSync(join(tmpdir(), "ledger-jobs-")), "jobs");
    const name = `place-${Math.random().toString(36).slice(2, 7)}`;
    const a = checkout(name, jobs);
    const b = checkout(name, jobs);
    const first = await front(a, {}, "spend", "p", "--json");
    expect(first.code, first.err).toBe(0);
    const doc = JSON.parse(first.out) as { ledger: string };
    expect(doc.ledger).toBe(`${jobs}.ledger.sqlite`);
    // A charge recorded through the first checkout's ledger...
    const project = projectFromConfig(
      {
        "sandbox:name": name,
        "sandbox:jobRoot": jobs,
        "sandbox:budget": '{"monthlyCapUsd":5,"enforce":"metered"}',
        "sandbox:templates": '{"default":{"image":"sandbox-busybox:1"}}',
      },
      "p",
    );
    const ledger = await openLedger(meterOf(project), { jobRoot: jobs, warn: () => undefined });
    await ledger.admit({
      id: "r1",
      template: "default",
      specHash: "h",
      command: ["true"],
      container: `${name}-r1`,
      size: { vcpu: 0.5, memoryMb: 256 },
      maxSeconds: 60,
    });
    await ledger.complete("r1", { exitCode: 0 });
    await ledger.close();
    // ...is what the second checkout reports, with no warning of a second ledger.
    const second = await front(b, {}, "audit", "p", "--json");
    expect(second.code, second.err).toBe(0);
    expect(second.err).not.toMatch(/also metered/);
    const audit = JSON.parse(second.out) as { ledger: string; runs: { id: string; exitCode: number }[] };
    expect(audit.ledger).toBe(doc.ledger);
    expect(audit.runs.map((r) => [r.id, r.exitCode])).toEqual([["r1", 0]]);
  });

  it("moves with sandbox:ledger.file, and a bad place is refused naming the key, the value and what is allowed", async () => {
    const jobs = join(mkdtempSync(join(tmpdir(), "ledger-jobs-")), "jobs");
    const books = join(mkdtempSync(join(tmpdir(), "ledger-books-")), "p.sqlite");
    const moved = await front(
      checkout("moved", jobs, { "sandbox:ledger": { file: books } }),
      {},
      "spend",
      "p",
      "--json",
    );
    expect(moved.code, moved.err).toBe(0);
    expect((JSON.parse(moved.out) as { ledger: string }).ledger).toBe(books);
    expect(existsSync(books)).toBe(true);
    expect(existsSync(`${jobs}.ledger.sqlite`)).toBe(false);

    const bad = await front(
      checkout("bad", jobs, { "sandbox:ledger": { file: "books/p.sqlite" } }),
      {},
      "check",
      "p",
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("sandbox:ledger.file");
    expect(bad.err).toContain("books/p.sqlite");
    expect(bad.err).toMatch(/absolute path/);
    const typo = await front(
      checkout("typo", jobs, { "sandbox:ledger": { fil: "/x.sqlite" } }),
      {},
      "check",
      "p",
    );
    expect(typo.code).toBe(2);
    expect(typo.err).toContain("sandbox:ledger");
  });

  it("SANDBOX_LEDGER moves it, and a relative one is refused before anything is read", async () => {
    const jobs = join(mkdtempSync(join(tmpdir(), "ledger-jobs-")), "jobs");
    const env = join(mkdtempSync(join(tmpdir(), "ledger-env-")), "e.sqlite");
    const root = checkout("envmoved", jobs);
    const moved = await front(root, { SANDBOX_LEDGER: env }, "spend", "p", "--json");
    expect(moved.code, moved.err).toBe(0);
    expect((JSON.parse(moved.out) as { ledger: string }).ledger).toBe(env);
    const bad = await front(root, { SANDBOX_LEDGER: "rel/e.sqlite" }, "spend", "p");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('SANDBOX_LEDGER="rel/e.sqlite"');
    expect(bad.err).toMatch(/absolute path/);
  });
});

describe("a library launcher", () => {
  it("is refused without a ledger, and runs unmetered only when `ledger: false` is written", async () => {
    const docker = dockerClient();
    expect(() => new Launcher(docker, { preflight: policyPreflight() } as never)).toThrow(
      /options\.ledger is missing.*ledger: false/,
    );
    expect(() => new Launcher(docker, { preflight: policyPreflight(), ledger: {} } as never)).toThrow(
      /not a Ledger/,
    );
    expect(() => new Launcher(docker, { preflight: policyPreflight(), ledger: false })).not.toThrow();
    const jobs = join(mkdtempSync(join(tmpdir(), "ledger-jobs-")), "jobs");
    const project = projectFromConfig(
      {
        "sandbox:name": "lib",
        "sandbox:jobRoot": jobs,
        "sandbox:budget": '{"monthlyCapUsd":5}',
        "sandbox:templates": '{"default":{"image":"sandbox-busybox:1"}}',
      },
      "p",
    );
    const ledger = await openLedger(meterOf(project), { jobRoot: jobs });
    expect(ledger).toBeInstanceOf(Ledger);
    expect(() => new Launcher(docker, { preflight: policyPreflight(), ledger })).not.toThrow();
    await ledger.close();
  });
});
