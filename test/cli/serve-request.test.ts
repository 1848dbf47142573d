// The launch service's checks that need no engine: `serve`'s options (loopback only), a launch request's fields
// (each fault named with its field, its value and what is allowed, whatever the request holds), what a task left in
// its job folder as returned (plain data, bounded), and the client's own refusals of where it would connect.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseServeArgs } from "../../cli/serve";
import { BadRequest, checkRunRequest, describeValue } from "../../cli/serve-request";
import { RESULT_LIMITS, readResults } from "../../cli/serve-results";
import { resolveProject } from "../../components/model";
import { SandboxClient } from "../../runtime/serve/client";

const project = resolveProject({
  name: "sv-unit",
  budget: { monthlyCapUsd: 10 },
  jobRoot: "/tmp/sv-unit-jobs",
  templates: {
    default: { image: "sandbox-busybox:1", timeoutSeconds: 60 },
    other: { image: "sandbox-busybox:1" },
  },
});

/** The fault a request is refused with, as its fields. */
function fault(doc: unknown): { field: string; value: string; allowed: string } {
  try {
    checkRunRequest(doc, project);
  } catch (e) {
    if (e instanceof BadRequest) return { field: e.field, value: e.value, allowed: e.allowed };
    throw e;
  }
  throw new Error("the request was taken");
}

describe("serve's options", () => {
  it("take a loopback address for --listen and a pool size", () => {
    expect(parseServeArgs(["--listen", "127.0.0.1:0"])).toEqual({ listen: { host: "127.0.0.1", port: 0 } });
    expect(parseServeArgs(["--listen=127.9.8.7:7070", "--pool", "2"])).toEqual({
      listen: { host: "127.9.8.7", port: 7070 },
      pool: 2,
    });
    expect(parseServeArgs(["--listen", "[::1]:80"]).listen).toEqual({ host: "::1", port: 80 });
    expect(parseServeArgs(["--listen", "localhost:80"]).listen).toEqual({ host: "127.0.0.1", port: 80 });
  });

  it.each([
    "0.0.0.0:7070",
    "192.168.1.10:80",
    "10.0.0.1:80",
    "[::]:80",
    "[fe80::1]:80",
    "127.0.0.256:80",
    "128.0.0.1:80",
    "example.com:80",
    "127.0.0.1",
    ":80",
  ])("refuse --listen %s, naming it and what is allowed", (address) => {
    expect(() => parseServeArgs(["--listen", address])).toThrow(
      new RegExp(
        `^serve: --listen ${JSON.stringify(address).replace(/[[\].]/g, "\\$&")}: .*; allowed: a loopback address`,
      ),
    );
  });

  it("refuse a port past 65535, a bad pool, an unknown option and a flag given twice", () => {
    expect(() => parseServeArgs(["--listen", "127.0.0.1:70000"])).toThrow(/port 70000 is past 65535/);
    expect(() => parseServeArgs(["--pool", "two"])).toThrow(/--pool "two": a whole number/);
    expect(() => parseServeArgs(["--pool"])).toThrow(/--pool needs a value/);
    expect(() => parseServeArgs(["--port", "1"])).toThrow(/unexpected "--port"; allowed: --pool N, --listen/);
    expect(() => parseServeArgs(["--pool", "1", "--pool", "2"])).toThrow(/--pool is given twice/);
  });
});

describe("a launch request", () => {
  it("is taken with its fields as given", () => {
    const doc = {
      template: "default",
      command: ["sh", "-c", "true"],
      files: { "a/b.txt": "x" },
      stdin: "in",
      agent: "ci",
      env: { LEVEL: "3" },
      timeoutSeconds: 60,
    };
    expect(checkRunRequest(doc, project)).toEqual(doc);
    expect(checkRunRequest({ template: "other" }, project)).toEqual({ template: "other" });
  });

  it("is refused naming the field at fault, its value and what is allowed", () => {
    expect(fault({ template: "nope" })).toEqual({
      field: "template",
      value: '"nope"',
      allowed: "one of the stack's templates: default, other",
    });
    expect(fault({})).toMatchObject({ field: "template", value: "undefined" });
    expect(fault([1])).toMatchObject({ field: "body", value: "a list of 1" });
    expect(fault({ template: "default", image: "alpine" })).toMatchObject({
      field: "image",
      allowed: expect.stringContaining("template, command, files"),
    });
    expect(fault({ template: "default", command: [] })).toMatchObject({
      field: "command",
      value: "a list of 0",
    });
    expect(fault({ template: "default", command: ["ls", 3] })).toMatchObject({
      field: "command[1]",
      value: "3",
    });
    expect(fault({ template: "default", command: ["a\0b"] })).toMatchObject({ field: "command[0]" });
    expect(fault({ template: "default", files: { "../up": "x" } })).toMatchObject({
      field: 'files["../up"]',
      allowed: expect.stringContaining("relative path"),
    });
    expect(fault({ template: "default", files: { "/abs": "x" } })).toMatchObject({ field: 'files["/abs"]' });
    expect(fault({ template: "default", files: { a: 1 } })).toMatchObject({
      field: 'files["a"]',
      value: "1",
    });
    expect(fault({ template: "default", stdin: 5 })).toMatchObject({ field: "stdin", value: "5" });
    expect(fault({ template: "default", agent: "Bad Agent" })).toMatchObject({
      field: "agent",
      value: '"Bad Agent"',
    });
    expect(fault({ template: "default", env: { "1X": "a" } })).toMatchObject({ field: 'env["1X"]' });
    expect(fault({ template: "default", env: { HTTP_PROXY: "x" } })).toMatchObject({
      field: 'env["HTTP_PROXY"]',
      allowed: expect.stringContaining("toolkit does not set"),
    });
    expect(fault({ template: "default", timeoutSeconds: 61 })).toEqual({
      field: "timeoutSeconds",
      value: "61",
      allowed: `whole seconds from 1 to template "default"'s deadline, 60`,
    });
    expect(fault({ template: "default", timeoutSeconds: 1.5 })).toMatchObject({
      field: "timeoutSeconds",
      value: "1.5",
    });
  });

  it("names a hostile value without echoing it whole or walking into it", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(fault({ template: "default", command: [deep] })).toMatchObject({
      field: "command[0]",
      value: "a list of 1",
    });
    expect(fault({ template: deep })).toMatchObject({ field: "template", value: "a list of 1" });
    const long = "x".repeat(1_000_000);
    const f = fault({ template: long });
    expect(f.value).toBe(`${JSON.stringify(`${"x".repeat(80)}…`)} (1000000 characters)`);
    expect(describeValue({ a: deep })).toBe("an object");
    expect(fault({ template: "default", command: Array(5000).fill("a") })).toMatchObject({
      field: "command",
      value: "a list of 5000",
    });
  });
});

describe("what a task left in its job folder", () => {
  it("comes back as plain data: text, binary as base64, inputs left unchanged not sent, links and FIFOs skipped", () => {
    const dir = mkdtempSync(join(tmpdir(), "sv-results-"));
    writeFileSync(join(dir, "out.txt"), "result\n");
    writeFileSync(join(dir, "in.txt"), "given\n");
    writeFileSync(join(dir, "changed.txt"), "changed\n");
    writeFileSync(join(dir, "blob.bin"), Buffer.from([0xff, 0x00, 0xfe]));
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "deep.txt"), "deep\n");
    symlinkSync("/etc/passwd", join(dir, "link"));
    expect(spawnSync("mkfifo", [join(dir, "fifo")]).status).toBe(0);
    const r = readResults(dir, { "in.txt": "given\n", "changed.txt": "before\n" });
    expect(r.results).toEqual({
      "out.txt": "result\n",
      "changed.txt": "changed\n",
      "sub/deep.txt": "deep\n",
    });
    expect(r.binaryResults).toEqual({ "blob.bin": Buffer.from([0xff, 0x00, 0xfe]).toString("base64") });
    expect(r.skipped).toEqual([
      { path: "fifo", reason: "not a regular file" },
      { path: "link", reason: "a link" },
    ]);
  });

  it("is bounded in bytes and depth", () => {
    const dir = mkdtempSync(join(tmpdir(), "sv-results-"));
    writeFileSync(join(dir, "small.txt"), "s");
    writeFileSync(join(dir, "sparse"), "");
    truncateSync(join(dir, "sparse"), RESULT_LIMITS.bytes + 1);
    let deep = dir;
    for (let i = 0; i <= RESULT_LIMITS.depth; i++) {
      deep = join(deep, "d");
      mkdirSync(deep);
    }
    writeFileSync(join(deep, "bottom.txt"), "b");
    const r = readResults(dir, {});
    expect(r.results).toEqual({ "small.txt": "s" });
    expect(r.skipped).toEqual([
      {
        path: "sparse",
        reason: `${RESULT_LIMITS.bytes + 1} bytes: past the ${RESULT_LIMITS.bytes} bytes returned in all`,
      },
      { path: `${"d/".repeat(RESULT_LIMITS.depth)}d`, reason: `deeper than ${RESULT_LIMITS.depth} folders` },
    ]);
  });
});

describe("SandboxClient", () => {
  it("connects to a socket, or to loopback with an agent's key, and nowhere else", () => {
    expect(() => new SandboxClient({ socket: "/tmp/x.sock" })).not.toThrow();
    expect(() => new SandboxClient({ url: "http://127.0.0.1:7070", token: "sbx_agent_k" })).not.toThrow();
    expect(() => new SandboxClient({ url: "http://[::1]:7070", token: "sbx_agent_k" })).not.toThrow();
    expect(() => new SandboxClient({ url: "http://10.0.0.1:7070", token: "sbx_agent_k" })).toThrow(
      /loopback only/,
    );
    expect(() => new SandboxClient({ url: "https://127.0.0.1:7070", token: "sbx_agent_k" })).toThrow(
      /loopback only/,
    );
    expect(() => new SandboxClient({ url: "http://127.0.0.1:7070" } as never)).toThrow(/give token/);
    expect(() => new SandboxClient({ socket: "/tmp/x.sock", url: "http://127.0.0.1:1" } as never)).toThrow(
      /either socket/,
    );
    expect(() => new SandboxClient({ socket: "/tmp/x.sock", token: "two words" })).toThrow(/an agent's key/);
  });
});
