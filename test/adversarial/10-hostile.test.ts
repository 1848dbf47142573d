/**
 * Class 10: hostile input. A FIFO, a 100 MB file, 10,000 levels of nesting and binary content must each end the scan
 * with exit 2 and a message naming the problem, never a hang or a crash. The scan runs as its own process (as a user
 * runs it) under a deadline, so a hang fails the test instead of freezing the test worker.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../scan/helpers";
import { pod } from "./fixtures";

const DEADLINE_MS = 90_000;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), "sandbox-adversarial-"));
  dirs.push(d);
  return d;
}

/** `scan --format json <args>` in `cwd` as a child process with a deadline. */
function scanProcess(
  cwd: string,
  args: readonly string[],
): { code: number | null; out: string; err: string; timedOut: boolean } {
  const r = spawnSync(
    join(ROOT, "node_modules", ".bin", "tsx"),
    [join(ROOT, "cli", "scan.ts"), "--format", "json", ...args],
    {
      cwd,
      encoding: "utf8",
      timeout: DEADLINE_MS,
      killSignal: "SIGKILL",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}` },
    },
  );
  const timedOut = r.error !== undefined && (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT";
  return { code: r.status, out: r.stdout ?? "", err: r.stderr ?? "", timedOut };
}

function expectRefused(r: ReturnType<typeof scanProcess>): void {
  expect(r.timedOut, "the scan hung").toBe(false);
  expect(r.code, r.err.slice(0, 400)).toBe(2);
  let messages = r.err.trim();
  try {
    const report = JSON.parse(r.out) as { errors?: { message: string }[] };
    messages += (report.errors ?? []).map((e) => e.message).join("\n");
  } catch {
    // a refusal may come before any report: then the message is on standard error
  }
  expect(messages.length, "a refusal names its reason").toBeGreaterThan(0);
}

describe("class 10: hostile input ends with exit 2 and a message, never a hang", () => {
  it("a FIFO named on the command line (nothing ever writes to it)", () => {
    const d = folder();
    const mk = spawnSync("mkfifo", [join(d, "pipe.yaml")]);
    expect(mk.status).toBe(0);
    expectRefused(scanProcess(d, ["pipe.yaml"]));
  }, 120_000);

  it("a FIFO inside a scanned folder, next to a safe Pod", () => {
    const d = folder();
    writeFileSync(join(d, "pod.yaml"), pod("p"));
    expect(spawnSync("mkfifo", [join(d, "pipe.yaml")]).status).toBe(0);
    expectRefused(scanProcess(d, ["."]));
  }, 120_000);

  it("a 100 MB YAML file", () => {
    const d = folder();
    const line = "# padding padding padding padding padding padding padding padding\n";
    writeFileSync(
      join(d, "big.yaml"),
      `${pod("p")}${line.repeat(Math.ceil((100 * 1024 * 1024) / line.length))}`,
    );
    expectRefused(scanProcess(d, ["big.yaml"]));
  }, 120_000);

  it("10,000-deep JSON arrays", () => {
    const d = folder();
    writeFileSync(join(d, "deep.json"), `${"[".repeat(10_000)}${"]".repeat(10_000)}`);
    expectRefused(scanProcess(d, ["deep.json"]));
  }, 120_000);

  it("10,000-deep YAML flow mappings under a Pod's spec", () => {
    const d = folder();
    writeFileSync(
      join(d, "deep.yaml"),
      `apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: ${"{a: ".repeat(10_000)}1${"}".repeat(10_000)}\n`,
    );
    expectRefused(scanProcess(d, ["deep.yaml"]));
  }, 120_000);

  it("10,000-deep YAML block sequences", () => {
    const d = folder();
    const text = Array.from({ length: 10_000 }, (_, i) => `${" ".repeat(i * 2)}- `).join("\n");
    writeFileSync(join(d, "deep-block.yaml"), `${text}x\n`);
    expectRefused(scanProcess(d, ["deep-block.yaml"]));
  }, 120_000);

  it("binary content (NUL bytes and invalid UTF-8) in a .yaml file", () => {
    const d = folder();
    const bytes = Buffer.alloc(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 151 + 7) % 256;
    writeFileSync(join(d, "blob.yaml"), bytes);
    expectRefused(scanProcess(d, ["blob.yaml"]));
  }, 120_000);
});
