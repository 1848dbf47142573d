/**
 * Class 10: every read path is bounded, and what is read or refused is said plainly.
 * - A regular-looking file that answers EAGAIN (/proc/kmsg: S_IFREG, size 0, a non-blocking read has nothing until
 *   the kernel logs again) is refused, never retried without end; standard input from such a file too. Only a pipe
 *   on standard input is waited for, as a blocking read would be. A terminal or a device on standard input is
 *   refused.
 * - Standard input that is empty, or holds no object, is exit 2: kubectl apply refuses it ("no objects passed to
 *   apply"), and `helm template ... | scan -` must not pass when helm printed nothing.
 * - The name never decides the format: kubectl's decoder (apimachinery GuessJSONStream) reads JSON only when the
 *   text opens with `{`, so YAML named `x.json` (or `--stdin-name x.json`) is read as YAML.
 * - A named symbolic link loop is reported as a loop (ELOOP), a dangling one as a link to nothing.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputRefused, type ReadFn, readCapped, WOULD_BLOCK } from "../../../cli/scan/files";
import { readStandardInput } from "../../../cli/scan/stdin";
import { ROOT, scan, scanJson } from "../../scan/helpers";
import { pod } from "../fixtures";
import { blocked, scanFiles, verdict } from "../harness";

const SEED = { seed: 20_260_313, numRuns: 50 };
const PRIV = pod("priv", { containerSecurity: "privileged: true" });

/** A read that answers the script: a number of EAGAINs, then chunks, then the end. */
function scripted(steps: readonly (string | "EAGAIN")[]): ReadFn {
  let i = 0;
  return (_fd, buffer, offset) => {
    const step = steps[i++];
    if (step === undefined) return 0;
    if (step === "EAGAIN")
      throw Object.assign(new Error("EAGAIN: resource temporarily unavailable"), { code: "EAGAIN" });
    return buffer.write(step, offset);
  };
}

describe("class 10: a read that would block", () => {
  const step = fc.oneof(fc.constant<"EAGAIN">("EAGAIN"), fc.stringMatching(/^[a-z: \n]{1,20}$/));

  it("is refused for a file, whatever came before it, and waited for only on a pipe", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 8 }), (steps) => {
        const text = steps.filter((s) => s !== "EAGAIN").join("");
        const blocks = steps.includes("EAGAIN");
        const started = Date.now();
        if (blocks) expect(() => readCapped(3, 1000, false, scripted(steps))).toThrow(WOULD_BLOCK);
        else expect(Buffer.from(readCapped(3, 1000, false, scripted(steps)) ?? []).toString()).toBe(text);
        expect(Date.now() - started).toBeLessThan(1000);
        expect(Buffer.from(readCapped(3, 1000, true, scripted(steps)) ?? []).toString()).toBe(text);
      }),
      SEED,
    );
  });

  it("on standard input from a regular file (scan - < /proc/kmsg) is refused; the file itself is read", () => {
    const dir = mkdtempSync(join(tmpdir(), "stdin-"));
    try {
      writeFileSync(join(dir, "pod.yaml"), PRIV);
      const fd = openSync(join(dir, "pod.yaml"), "r");
      try {
        expect(Buffer.from(readStandardInput(1 << 20, fd)).toString()).toBe(PRIV);
        expect(() => readStandardInput(1 << 20, fd, scripted(["EAGAIN"]))).toThrow(WOULD_BLOCK);
        expect(() => readStandardInput(10, fd)).toThrow(/over the total input limit of 10 bytes/);
      } finally {
        closeSync(fd);
      }
      const nul = openSync("/dev/null", "r");
      try {
        expect(() => readStandardInput(1 << 20, nul)).toThrow(InputRefused);
        expect(() => readStandardInput(1 << 20, nul)).toThrow(
          "is a character device, not a pipe or a regular file",
        );
      } finally {
        closeSync(nul);
      }
      // The real CLI with standard input redirected from the file, and from a pipe: judged alike.
      const run = (stdin: number | string) =>
        spawnSync(
          join(ROOT, "node_modules", ".bin", "tsx"),
          [join(ROOT, "cli", "scan.ts"), "--format", "json", "-"],
          {
            cwd: dir,
            input: typeof stdin === "string" ? stdin : undefined,
            stdio: [typeof stdin === "number" ? stdin : "pipe", "pipe", "pipe"],
            encoding: "utf8",
            timeout: 60_000,
          },
        );
      const file = openSync(join(dir, "pod.yaml"), "r");
      try {
        const fromFile = run(file);
        const fromPipe = run(PRIV);
        expect(fromFile.status, fromFile.stderr).toBe(1);
        expect(fromPipe.status, fromPipe.stderr).toBe(1);
        const rules = (out: string) =>
          (JSON.parse(out) as { findings: { ruleId: string }[] }).findings.map((f) => f.ruleId).sort();
        expect(rules(fromFile.stdout)).toEqual(rules(fromPipe.stdout));
        expect(rules(fromFile.stdout)).toContain("sandbox-disallow-privileged");
      } finally {
        closeSync(file);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("class 10: standard input with nothing in it", () => {
  it("is exit 2 with one message, with --ci or without, whatever blank or object-less text it holds", async () => {
    const blank = fc.stringMatching(/^[ \t\n\r]{0,6}$/);
    const objectless = fc.constantFrom("---\n", "# only a comment\n", "---\n# c\n---\n", "null\n", "~\n");
    await fc.assert(
      fc.asyncProperty(fc.oneof(blank, objectless), fc.boolean(), async (text, ci) => {
        const r = await scan([...(ci ? ["--ci"] : []), "-"], text);
        expect(r.code, JSON.stringify(text)).toBe(2);
        expect(r.out + r.err).toMatch(/nothing was scanned/);
        expect(r.out + r.err).toContain("no objects passed to apply");
      }),
      { ...SEED, numRuns: 20 },
    );
    // With an object it is judged as before.
    expect((await scanJson(["-"], PRIV)).code).toBe(1);
    expect((await scanJson(["-"], pod("ok"))).code).toBe(0);
  });
});

describe("class 10: the format is the content's, never the name's", () => {
  it("YAML named x.json (on disk or --stdin-name) is read as YAML, with the verdict of x.yaml", async () => {
    const names = fc.constantFrom("x.json", "x.JSON", "x.yaml", "x.yml", "x", "chart/rendered.json");
    await fc.assert(
      fc.asyncProperty(names, fc.constantFrom(PRIV, pod("ok")), async (name, text) => {
        const want = text === PRIV ? 1 : 0;
        const r = await scanJson(["-", "--stdin-name", name], text);
        expect(r.code, `${name}: ${JSON.stringify(r.report.errors)}`).toBe(want);
      }),
      { ...SEED, numRuns: 20 },
    );
    await verdict({ "pod.json": PRIV }, blocked("sandbox-disallow-privileged", "priv"));
    // Text that opens with `{` is JSON, as kubectl decodes it: broken JSON is still JSON's error.
    const broken = await scanFiles({ "b.json": '{"apiVersion": "v1", kind: Pod}\n' });
    expect(broken.code).toBe(2);
    expect(broken.report.errors[0]?.message).toMatch(/^not valid JSON/);
  });
});

describe("class 10: a named path that cannot be read says why", () => {
  it("a loop is a loop, a dangling link points to nothing, a missing path is missing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "links-"));
    try {
      symlinkSync("loop2.yaml", join(dir, "loop1.yaml"));
      symlinkSync("loop1.yaml", join(dir, "loop2.yaml"));
      symlinkSync("self.yaml", join(dir, "self.yaml"));
      symlinkSync("nowhere.yaml", join(dir, "dangling.yaml"));
      const messages = async (p: string) => {
        const r = await scanJson([p], undefined, dir);
        expect(r.code).toBe(2);
        return r.report.errors.map((e) => e.message).join("\n");
      };
      expect(await messages("loop1.yaml")).toContain("is a symbolic link loop (ELOOP");
      expect(await messages("self.yaml")).toContain("is a symbolic link loop (ELOOP");
      expect(await messages("dangling.yaml")).toBe(
        'is a symbolic link to nothing (it points to "nowhere.yaml"); not read',
      );
      expect(await messages("absent.yaml")).toBe("no such file or folder");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
