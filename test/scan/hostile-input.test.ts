/**
 * Hostile input never hangs or crashes `scan`: non-regular files are refused from their stat (a FIFO never blocks),
 * files and the whole input are size-capped, YAML and JSON nesting is capped before any recursive reader (aliases
 * expanded), binary input is refused, and each of these is exit 2 with one message naming the file and the limit,
 * while the other inputs are still judged. Folders: hidden ones and upper-case extensions are read; .git,
 * node_modules and other files are listed as skipped; symbolic link loops end.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { ALL_RULES } from "../../policy/rules/registry";
import { copy, safeK8sContainer, safePodSpec } from "../policy/fixtures";
import { ROOT, scan, scanJson, tempFiles } from "./helpers";

/** A Pod that passes every mandatory rule. */
function safePod(name: string): Record<string, unknown> {
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: safePodSpec() };
}

/** A Pod that fails `sandbox-disallow-privileged` only among the mandatory rules. */
function privilegedPod(name: string): Record<string, unknown> {
  const spec = copy(safePodSpec()) as { containers: Record<string, unknown>[] };
  const c = safeK8sContainer();
  c.securityContext = { ...(c.securityContext as object), privileged: true, allowPrivilegeEscalation: true };
  spec.containers = [c];
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec };
}

const GOOD = stringify(privilegedPod("still-judged"));

/** The file of every error, and the rule ids on the resource that must still be judged. */
async function run(args: readonly string[], cwd: string) {
  const { code, report } = await scanJson(args, undefined, cwd);
  return {
    code,
    errors: report.errors.map((e) => `${e.location.file}: ${e.message}`),
    judged: report.findings
      .filter((f) => f.resource.name === "still-judged" && f.level === "mandatory" && !f.unchecked)
      .map((f) => f.ruleId),
    skipped: report.skipped.map((s) => `${s.location.file} (${s.kind}): ${s.reason}`),
    report,
  };
}

const TSX = join(ROOT, "node_modules", ".bin", "tsx");

/** The real CLI, with a deadline: a hang is a failure, not a stuck suite. */
function cli(args: readonly string[], cwd: string) {
  const r = spawnSync(TSX, [join(ROOT, "cli", "scan.ts"), ...args], {
    cwd,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, INIT_CWD: cwd },
  });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

describe("non-regular files", () => {
  it("refuses a FIFO in a folder without blocking, and still judges the other files", async () => {
    const dir = tempFiles({ "good.yaml": GOOD });
    execFileSync("mkfifo", [join(dir, "pipe.yaml")]);
    const r = await run(["."], dir);
    expect(r.code).toBe(2);
    expect(r.errors).toEqual(["pipe.yaml: is a FIFO (named pipe), not a regular file; not read"]);
    expect(r.judged).toContain("sandbox-disallow-privileged");
  });

  it("refuses a FIFO named on the command line, through the real CLI, within the deadline", () => {
    const dir = tempFiles({ "good.yaml": GOOD });
    execFileSync("mkfifo", [join(dir, "pipe.yaml")]);
    const r = cli(["--format", "json", "pipe.yaml", "good.yaml"], dir);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    const report = JSON.parse(r.out) as { errors: { location: { file: string }; message: string }[] };
    expect(report.errors.map((e) => `${e.location.file}: ${e.message}`)).toEqual([
      "pipe.yaml: is a FIFO (named pipe), not a regular file; not read",
    ]);
    expect(r.err).toBe("");
  }, 90_000);

  it("refuses a character device (/dev/zero, which never ends) and a socket", async () => {
    const dir = tempFiles({ "good.yaml": GOOD });
    const server = createServer();
    await new Promise<void>((done) => server.listen(join(dir, "api.yaml"), done));
    try {
      const r = await run(["/dev/zero", "api.yaml", "good.yaml"], dir);
      expect(r.code).toBe(2);
      expect(r.errors).toHaveLength(2);
      expect(r.errors[0]).toMatch(/dev\/zero: is a character device, not a regular file; not read$/);
      expect(r.errors[1]).toBe("api.yaml: is a socket, not a regular file; not read");
      expect(r.judged).toContain("sandbox-disallow-privileged");
    } finally {
      server.close();
    }
  });
});

describe("size caps", () => {
  it("refuses a file over the default 32 MiB cap from its size, without reading it", async () => {
    const dir = tempFiles({ "good.yaml": GOOD });
    // A sparse file: 33 MiB on paper, nothing on disk; the cap is judged from the stat.
    const fd = openSync(join(dir, "huge.yaml"), "w");
    closeSync(fd);
    execFileSync("truncate", ["-s", "33M", join(dir, "huge.yaml")]);
    const r = await run(["."], dir);
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([
      "huge.yaml: is 33 MiB, over the file size limit of 32 MiB (--max-file-size, --max-total-size)",
    ]);
    expect(r.judged).toContain("sandbox-disallow-privileged");
  });

  it("takes --max-file-size and --max-total-size, in bytes or K, M, G", async () => {
    const dir = tempFiles({
      "a.yaml": GOOD,
      "b.yaml": stringify(safePod("b")),
      "c.yaml": stringify(safePod("c")),
    });
    const small = await run(["--max-file-size", "100", "a.yaml"], dir);
    expect(small.code).toBe(2);
    expect(small.errors[0]).toMatch(/^a\.yaml: is \d+ bytes, over the file size limit of 100 bytes /);
    // Room for a.yaml and not for b.yaml as well: b.yaml and c.yaml are refused, a.yaml is judged.
    const room = Buffer.byteLength(GOOD) + 10;
    const total = await run(["--max-total-size", String(room), "a.yaml", "b.yaml", "c.yaml"], dir);
    expect(total.errors).toEqual(
      ["b.yaml", "c.yaml"].map(
        (f) =>
          `${f}: is ${Buffer.byteLength(stringify(safePod(f[0] ?? "")))} bytes, over the total input limit of ${room} bytes (--max-file-size, --max-total-size)`,
      ),
    );
    expect(total.judged).toContain("sandbox-disallow-privileged");
    expect((await scan(["--max-total-size", "1K", "a.yaml"], undefined, dir)).code).toBe(2);
    expect((await scan(["--max-file-size", "1M", "a.yaml"], undefined, dir)).code).toBe(1);
    const bad = await scan(["--max-file-size", "lots", "a.yaml"], undefined, dir);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      '--max-file-size must be a size in bytes, or with K, M or G (1024-based), not "lots"',
    );
  });
});

/** `depth` arrays nested in each other, in one of the spellings YAML and JSON give them. */
function nested(depth: number, spelling: "json" | "flow" | "block"): string {
  if (spelling === "json") return `${"[".repeat(depth)}${"]".repeat(depth)}`;
  if (spelling === "flow") return `x: ${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}\n`;
  let out = "";
  for (let i = 0; i < depth - 1; i++) out += `${" ".repeat(i * 2)}-\n`;
  return `x:\n${out.replace(/^/gm, "  ")}`;
}

describe("nesting depth", () => {
  it("refuses a 100000-deep Pulumi preview before any reader recurses, and still judges the rest", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const preview = `{"steps":[{"op":"create","urn":"urn:pulumi:s::p::docker:index/container:Container::c","newState":{"type":"docker:index/container:Container","urn":"urn:pulumi:s::p::docker:index/container:Container::c","inputs":{"image":"x","envs":${deep}}}}]}`;
    const dir = tempFiles({ "deep.json": preview, "good.yaml": GOOD });
    const r = await run(["."], dir);
    expect(r.code).toBe(2);
    expect(r.errors).toEqual(["deep.json: is nested deeper than 256 levels (--max-depth); not read"]);
    expect(r.judged).toContain("sandbox-disallow-privileged");
  });

  it("refuses a 100000-deep YAML file through the real CLI, with one line and no stack trace", () => {
    const dir = tempFiles({ "deep.yaml": nested(100_000, "flow"), "good.yaml": GOOD });
    const r = cli(["deep.yaml", "good.yaml"], dir);
    expect(r.code).toBe(2);
    expect(r.out).toContain("deep.yaml:1: is nested deeper than 256 levels (--max-depth); not read");
    expect(r.out).toContain("sandbox-disallow-privileged");
    expect(r.out + r.err).not.toMatch(/\n\s+at /);
  }, 90_000);

  it("gives every spelling of the same nesting the same verdict: read up to the cap, refused past it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: -2, max: 2 }),
        async (cap, delta) => {
          const depth = Math.max(1, cap + delta);
          const verdicts = new Set<string>();
          for (const spelling of ["json", "flow", "block"] as const) {
            const { report } = await scanJson(["--max-depth", String(cap), "-"], nested(depth, spelling));
            const refused = report.errors.some((e) => e.message.includes(`nested deeper than ${cap} levels`));
            verdicts.add(String(refused));
            expect(refused).toBe(depth > cap);
          }
          expect(verdicts.size).toBe(1);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("counts depth with aliases expanded, and refuses an alias bomb by its expansion", async () => {
    // Each anchor nests the previous one 20 levels deeper: 13 aliases reach 260 levels in a few lines.
    let chain = "a0: &a0 []\n";
    for (let i = 1; i <= 13; i++) chain += `a${i}: &a${i} ${"[".repeat(20)}*a${i - 1}${"]".repeat(20)}\n`;
    const deep = await scanJson(["-"], chain);
    expect(deep.code).toBe(2);
    expect(deep.report.errors.map((e) => e.message)).toEqual([
      "is nested deeper than 256 levels once its aliases are expanded (--max-depth); not read",
    ]);
    let bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (let i = 1; i <= 9; i++)
      bomb += `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(", ")}]\n`;
    const laughs = await scanJson(["-"], bomb);
    expect(laughs.code).toBe(2);
    expect(laughs.report.errors.map((e) => e.message)).toEqual([
      "its aliases expand to more than 1000000 extra nodes (an alias bomb); not read",
    ]);
  });

  it("reads ordinary aliases and Compose anchors as before (no new refusal)", async () => {
    const yaml = `x-base: &base\n  image: busybox\n  read_only: true\nservices:\n  a:\n    <<: *base\n  b:\n    <<: *base\n`;
    const { report } = await scanJson(["--stdin-name", "compose.yaml", "-"], yaml);
    expect(report.errors).toEqual([]);
    expect(report.resources.map((r) => r.name)).toEqual(["a", "b"]);
  });
});

describe("binary input", () => {
  it.each([
    ["nul.yaml", Buffer.from("apiVersion: v1\nkind: Pod\0\n"), "is binary (a NUL byte at offset 24)"],
    ["latin1.yaml", Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]), "is not valid UTF-8 text"],
    // UTF-16 without its byte-order mark cannot be told from binary; with the mark it is read (below).
    ["utf16.json", Buffer.from(`{"kind":"Pod"}`, "utf16le"), "is binary (a NUL byte at offset 1)"],
  ])("refuses %s with a clear message and still judges the rest", async (name, bytes, message) => {
    const dir = tempFiles({ "good.yaml": GOOD });
    writeFileSync(join(dir, name), bytes);
    const r = await run(["."], dir);
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toContain(`${name}: ${message}`);
    expect(r.errors[0]).toContain("scan reads UTF-8 text, or UTF-16 with its byte-order mark");
    expect(r.judged).toContain("sandbox-disallow-privileged");
  });

  it.each(["utf16le", "utf16be"] as const)(
    "reads %s with its byte-order mark, as kubectl does",
    async (enc) => {
      const dir = tempFiles({});
      const le = Buffer.from(`\ufeff${GOOD}`, "utf16le");
      writeFileSync(join(dir, "pod.yaml"), enc === "utf16le" ? le : Buffer.from(le).swap16());
      const r = await run(["."], dir);
      expect(r.errors).toEqual([]);
      expect(r.judged).toContain("sandbox-disallow-privileged");
    },
  );

  it("reads UTF-8 with a byte-order mark and non-ASCII text (no new refusal)", async () => {
    const dir = tempFiles({ "pod.yaml": `\ufeff# café ☕\n${GOOD}` });
    const r = await run(["pod.yaml"], dir);
    expect(r.errors).toEqual([]);
    expect(r.judged).toContain("sandbox-disallow-privileged");
  });
});

describe("folders", () => {
  it("reads hidden folders and upper-case extensions; lists .git, node_modules and other files as skipped", async () => {
    const dir = tempFiles({
      ".github/workflows/pod.YAML": stringify(privilegedPod("in-github")),
      ".k8s/pod.Yml": stringify(privilegedPod("in-k8s")),
      "POD.JSON": JSON.stringify(privilegedPod("upper-json")),
      ".git/config.yaml": stringify(privilegedPod("in-git")),
      "node_modules/pkg/pod.yaml": stringify(privilegedPod("in-node-modules")),
      "README.md": "# not a manifest\n",
    });
    // Outside CI mode (which CI=true in the environment turns on): there a skipped folder holding a manifest fails.
    const r = await run(["--no-fail-on-unjudged", "."], dir);
    expect(r.code).toBe(1);
    expect(r.report.resources.map((x) => x.name).sort()).toEqual(["in-github", "in-k8s", "upper-json"]);
    expect(r.skipped).toEqual([
      ".git (folder): a Git object store, not the project's files; not scanned, though `kubectl apply -R` would apply the .yaml, .yml and .json files in it, such as .git/config.yaml; name the folder to scan it",
      "README.md (file): not .yaml, .yml, .json (any case); name the file to scan it anyway",
      "node_modules (folder): installed packages, not the project's files; not scanned, though `kubectl apply -R` would apply the .yaml, .yml and .json files in it, such as node_modules/pkg/pod.yaml; name the folder to scan it",
    ]);
  });

  it("ends on a symbolic link loop and lists it", async () => {
    const dir = tempFiles({ "k8s/pod.yaml": stringify(privilegedPod("once")) });
    symlinkSync("..", join(dir, "k8s", "up"));
    mkdirSync(join(dir, "k8s", "sub"));
    symlinkSync(join(dir, "k8s"), join(dir, "k8s", "sub", "again"));
    const r = await run(["."], dir);
    expect(r.report.resources.map((x) => x.name)).toEqual(["once"]);
    expect(r.skipped).toEqual([
      "k8s/sub/again (folder): a symbolic link to k8s, which is already scanned (a loop or a second way in)",
      "k8s/up (folder): a symbolic link to ., which is already scanned (a loop or a second way in)",
    ]);
  });
});

describe("internal errors", () => {
  const rule = ALL_RULES.find((r) => r.id === "sandbox-disallow-privileged");
  if (rule === undefined) throw new Error("no such rule");

  it("is exit 2 with a short report naming what failed and where, never 1 and never a stack trace", async () => {
    const dir = tempFiles({ "bad.yaml": stringify(safePod("bad")), "good.yaml": GOOD });
    const real = rule.check;
    const spy = vi.spyOn(rule, "check").mockImplementation((s, c) => {
      if (s.subject === "workload" && JSON.stringify(s).includes('"bad"')) throw new Error("boom");
      return real(s, c);
    });
    try {
      const r = await run(["."], dir);
      expect(r.code).toBe(2);
      expect(r.errors).toEqual([
        "bad.yaml: internal error while judging Pod/bad: Error: boom; please report this (run with --verbose for details)",
      ]);
      expect(r.judged).toContain("sandbox-disallow-privileged");
      const verbose = await scanJson(["--verbose", "."], undefined, dir);
      expect(verbose.report.errors[0]?.message).toMatch(/please report this\nError: boom\n\s+at /);
    } finally {
      spy.mockRestore();
    }
  });
});
