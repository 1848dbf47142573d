// The checkout front's bundle (toolchain/front-bundle.cjs, chosen by toolchain/front.cjs): it runs only while every
// file it was made from is as recorded, a stale one is built again before it runs (or, when it cannot be, the
// TypeScript runs through tsx), so the front never runs code older than the sources. Driven end to end on a small
// checkout of its own (the real front's two files, real esbuild, a real Node process), then on this checkout's
// sources: the bundle of the real front loads neither the Docker client's SSH and BuildKit parts nor the Pulumi SDK
// for a task verb's start, and finds the checkout's files where tsx would.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = join(__dirname, "../..");
type Front = {
  BUNDLE: string;
  sourceSnapshot: (root: string, kind?: string) => string[];
  recordSources: (root: string, out: string, before: readonly string[], kind?: string) => boolean;
  freshBundle: (root: string) => boolean;
  chooseFront: (root: string, o?: { rebuild?: boolean }) => Promise<string>;
};
const front = require("../../toolchain/front.cjs") as Front;
const bundler = require("../../toolchain/front-bundle.cjs") as {
  buildBundle: (root: string, f: Front, out?: string) => Promise<boolean>;
  checkoutPlugin: (root: string, out: string) => unknown;
};

let root: string;
const write = (file: string, text: string) => {
  mkdirSync(join(root, file, ".."), { recursive: true });
  writeFileSync(join(root, file), text);
};

/** A main that says which code ran: its version, its file (the bundle, or the TypeScript), a source's folder. */
const main = (version: number) => `import { where } from "../runtime/where";
export async function runCommand(argv: readonly string[], root: string): Promise<void> {
  const { later } = await import("./later.js");
  const { EOL } = await import("node:os");
  process.stdout.write(JSON.stringify({ version: ${version}, file: __filename, where: where(), later: later() + EOL.trim(), argv, root }));
}
`;

/** Runs the small checkout's front as ./sandbox does; its one JSON line. */
function runFront(env: Record<string, string> = {}, argv = ["a", "b"]) {
  const r = spawnSync(process.execPath, [join(root, "toolchain", "front.cjs"), ...argv], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) return { failed: `${r.stdout}${r.stderr}` } as const;
  return JSON.parse(r.stdout) as {
    version: number;
    file: string;
    where: string;
    later: string;
    argv: string[];
  };
}

describe("the front's bundle on a checkout of its own", () => {
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "sandbox-front-bundle-"));
    mkdirSync(join(root, "toolchain"));
    for (const f of ["front.cjs", "front-bundle.cjs"])
      copyFileSync(join(REPO, "toolchain", f), join(root, "toolchain", f));
    // Its packages: the two the front uses, from this checkout, and a lock of its own.
    mkdirSync(join(root, "node_modules"));
    for (const p of ["esbuild", "tsx"])
      symlinkSync(join(REPO, "node_modules", p), join(root, "node_modules", p));
    write("node_modules/.package-lock.json", "{}\n");
    write("package.json", '{ "name": "small", "private": true }\n');
    write("package-lock.json", "{}\n");
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is built on first use, runs, and finds each source's folder in the checkout", () => {
    write("cli/main.ts", main(1));
    write("cli/later.ts", 'export const later = () => "loaded when used";\n');
    write("runtime/where.ts", "export const where = () => __dirname;\n");
    expect(front.freshBundle(root)).toBe(false);
    const r = runFront();
    expect(r).toEqual({
      version: 1,
      file: join(root, front.BUNDLE),
      where: join(root, "runtime"),
      later: "loaded when used",
      argv: ["a", "b"],
      root,
    });
    expect(front.freshBundle(root)).toBe(true);
  }, 60_000);

  it("keeps V8's code of each verb beside the bundle, once per verb, for that bundle only", () => {
    const cache = join(root, `${front.BUNDLE}.code-cache`);
    const header = () => JSON.parse(readFileSync(cache, "utf8").split("\n")[0] ?? "") as object;
    // The bundle it was made from: the file's inode, size and modification time.
    const s = statSync(join(root, front.BUNDLE), { bigint: true });
    const made = `${s.ino} ${s.size} ${s.mtimeNs}`;
    expect(header()).toEqual({ made, verbs: ["a"] });
    const kept = statSync(cache).mtimeMs;
    expect(runFront()).toMatchObject({ version: 1 });
    expect(statSync(cache).mtimeMs).toBe(kept);
    // Another verb's code is added; one that is not a word is kept as "other".
    expect(runFront({}, ["b"])).toMatchObject({ version: 1, argv: ["b"] });
    expect(runFront({}, ["--x"])).toMatchObject({ version: 1, argv: ["--x"] });
    expect(header()).toEqual({ made, verbs: ["a", "b", "other"] });
    // A cache that is not one V8 wrote is not used, and is written anew.
    writeFileSync(cache, `${JSON.stringify({ made, verbs: ["a", "b"] })}\nnot V8's`);
    expect(runFront()).toMatchObject({ version: 1 });
    expect(header()).toEqual({ made, verbs: ["a"] });
    // A bundle built anew of the same length (V8 checks no more) is another file: the old code is not used for it.
    write("cli/main.ts", main(4));
    expect(runFront()).toMatchObject({ version: 4 });
    const rebuilt = statSync(join(root, front.BUNDLE), { bigint: true });
    expect(rebuilt.size).toBe(s.size);
    expect(header()).toEqual({ made: `${rebuilt.ino} ${rebuilt.size} ${rebuilt.mtimeNs}`, verbs: ["a"] });
  }, 60_000);

  it("never runs a stale bundle: a changed source is built again before it runs", () => {
    write("cli/main.ts", main(2));
    expect(front.freshBundle(root)).toBe(false);
    expect(runFront()).toMatchObject({ version: 2, file: join(root, front.BUNDLE) });
    expect(front.freshBundle(root)).toBe(true);
  }, 60_000);

  it("when it may not build, runs the TypeScript instead of the stale bundle", () => {
    write("runtime/where.ts", 'export const where = () => "changed";\n');
    expect(runFront({ SANDBOX_FRONT_BUILD: "never" })).toMatchObject({
      version: 2,
      where: "changed",
      file: join(root, "cli", "main.ts"),
    });
    expect(front.freshBundle(root)).toBe(false);
  }, 60_000);

  it("when the sources do not build, runs none of the old bundle", () => {
    write("cli/main.ts", `${main(3)}\nexport const broken = ;\n`);
    const r = runFront();
    expect(r).toHaveProperty("failed");
    expect(JSON.stringify(r)).not.toContain('"version"');
    write("cli/main.ts", main(3));
    expect(runFront()).toMatchObject({ version: 3, where: "changed", file: join(root, front.BUNDLE) });
  }, 60_000);

  it("takes the installed packages, package.json and the bundle itself as part of what it was made from", async () => {
    const later = new Date(Date.now() + 5000);
    for (const f of ["node_modules/.package-lock.json", "package-lock.json", "package.json", front.BUNDLE]) {
      expect(front.freshBundle(root)).toBe(true);
      utimesSync(join(root, f), later, later);
      expect(front.freshBundle(root), f).toBe(false);
      expect(await bundler.buildBundle(root, front)).toBe(true);
    }
  }, 60_000);

  it("records nothing when a source changed while it was built", () => {
    const before = front.sourceSnapshot(root, "bundle");
    write("cli/later.ts", 'export const later = () => "changed meanwhile";\n');
    expect(front.recordSources(root, join(root, front.BUNDLE), before, "bundle")).toBe(false);
    expect(front.freshBundle(root)).toBe(false);
  });
});

describe("the real front's bundle", () => {
  let out: string;
  beforeAll(async () => {
    // Beside the checkout's own (in dist/, where the packages it leaves out are found), not over it.
    mkdirSync(join(REPO, "dist"), { recursive: true });
    out = join(mkdtempSync(join(REPO, "dist", "front-test-")), "sandbox.cjs");
    expect(await bundler.buildBundle(REPO, front, out)).toBe(true);
  }, 60_000);
  afterAll(() => rmSync(join(out, ".."), { recursive: true, force: true }));

  it("runs the task verbs without loading the Docker client's SSH and BuildKit parts or the Pulumi SDK", () => {
    // A stack of its own, on an engine that is not there: `run` loads all it needs, then says no engine answers.
    const stackRoot = mkdtempSync(join(tmpdir(), "sandbox-front-bundle-stack-"));
    mkdirSync(join(stackRoot, "stacks"));
    writeFileSync(
      join(stackRoot, "stacks", "Pulumi.t.yaml"),
      `config:\n  sandbox:name: fb\n  sandbox:jobRoot: ${join(stackRoot, "jobs")}\n  sandbox:budget:\n    monthlyCapUsd: 100\n  sandbox:templates:\n    default:\n      image: busybox:1\n`,
    );
    const verb = (argv: string[]) => {
      const script = `
        const { runCommand } = require(${JSON.stringify(out)});
        const heavy = () => Object.keys(require.cache).filter((f) => /node_modules\\/(ssh2|@grpc|protobufjs|@pulumi)\\//.test(f));
        runCommand(${JSON.stringify(argv)}, ${JSON.stringify(stackRoot)}).then(() => {
          process.stderr.write("\\n" + JSON.stringify({ heavy: heavy(), code: process.exitCode ?? 0 }));
        });`;
      const r = spawnSync(process.execPath, ["-e", script], {
        cwd: stackRoot,
        encoding: "utf8",
        env: {
          ...process.env,
          DOCKER_HOST: `unix://${join(stackRoot, "no-engine.sock")}`,
          SANDBOX_DOCKER_STAMP: "",
        },
      });
      return {
        ...(JSON.parse(r.stderr.trim().split("\n").at(-1) ?? "{}") as object),
        said: r.stdout + r.stderr,
      };
    };
    try {
      expect(verb(["check", "t"])).toMatchObject({
        heavy: [],
        code: 0,
        said: expect.stringContaining("template default"),
      });
      expect(verb(["run", "t", "default", "--", "true"])).toMatchObject({
        heavy: [],
        code: 3,
        said: expect.stringContaining("no Docker engine answers"),
      });
    } finally {
      rmSync(stackRoot, { recursive: true, force: true });
    }
  }, 60_000);

  it("starts the watchdog compiled beside it, from the same sources, not the TypeScript one", () => {
    const watchdog = join(out, "..", "orphan-watch.cjs");
    // runtime/watchdog.ts looks beside itself, which in the bundle is the bundle's own folder (the bundle is
    // minified: its spacing and declarations are esbuild's).
    expect(readFileSync(out, "utf8")).toMatch(
      /for ?\((?:const|let) name of ?\["orphan-watch\.js", ?"orphan-watch\.cjs"\]\) ?\{\s*(?:const|let) js ?= ?\(0, ?\w+\.join\)\(__dirname, ?name\)/,
    );
    expect(readFileSync(join(out, "..", ".sources"), "utf8")).toContain(`${relative(REPO, watchdog)} `);
    // It runs as the watchdog: a folder with nothing to watch and a launcher that is gone, and it is done.
    const empty = mkdtempSync(join(tmpdir(), "sandbox-front-bundle-watch-"));
    try {
      const r = spawnSync(process.execPath, [watchdog, "--sandbox-watchdog", empty, "2147483646", "x"], {
        encoding: "utf8",
        timeout: 30_000,
      });
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("leaves out of a task verb's start what it never uses, and each part still works when it is used", async () => {
    // The bundle's changes to zod and the Docker client, on a program of their own bundled as the front is: zod's
    // other languages and JSON Schema reader, Node's zlib and https, loaded only when used, and the Docker client's
    // requests over a unix socket to a server of this test.
    const dir = mkdtempSync(join(REPO, "dist", "front-test-parts-"));
    try {
      writeFileSync(
        join(dir, "entry.ts"),
        `import { z } from "zod";
import { createServer } from "node:http";
const Modem = require("docker-modem");
const util = require("dockerode/lib/util");
const loaded = (m: string) => (process as unknown as { moduleLoadList: string[] }).moduleLoadList.includes("NativeModule " + m);
export async function probe(socket: string) {
  const before = { zlib: loaded("zlib"), https: loaded("https"), tls: loaded("tls") };
  const english = z.string().safeParse(1).error?.issues[0]?.message;
  z.config(z.locales.fr());
  const french = z.string().safeParse(1).error?.issues[0]?.message;
  z.config(z.locales.en());
  const read = z.fromJSONSchema({ type: "string", minLength: 2 });
  const server = createServer((req, res) => res.end(JSON.stringify({ url: req.url, host: req.headers.host })));
  await new Promise<void>((r) => server.listen(socket, r));
  const modem = new Modem({ socketPath: socket });
  const answer = await new Promise((resolve, reject) =>
    modem.dial({ path: "/version?", method: "GET", statusCodes: { 200: true } }, (e: unknown, d: unknown) => (e ? reject(e) : resolve(d))),
  );
  server.close();
  const gzip = typeof util.prepareBuildContext === "function" && typeof require("zlib").createGzip === "function";
  const zlibAfter = loaded("zlib");
  // An image build's context, packed as dockerode packs it (tar-fs, the .dockerignore reader, gzip): the names in it.
  const context = socket + ".context";
  require("node:fs").mkdirSync(context);
  for (const [f, text] of [["a.txt", "a"], ["b.txt", "b"], [".dockerignore", "b.txt\\n"]]) require("node:fs").writeFileSync(context + "/" + f, text);
  const packed: Buffer = await new Promise((resolve) =>
    util.prepareBuildContext({ context, src: ["a.txt", "b.txt"] }, (s: NodeJS.ReadableStream) => {
      const chunks: Buffer[] = [];
      s.on("data", (c: Buffer) => chunks.push(c)).on("end", () => resolve(require("zlib").gunzipSync(Buffer.concat(chunks))));
    }),
  );
  const packedNames: string[] = [];
  for (let at = 0; at + 512 <= packed.length && packed[at] !== 0; ) {
    packedNames.push(packed.subarray(at, at + 100).toString().replace(/\\0.*$/s, ""));
    at += 512 + Math.ceil(Number.parseInt(packed.subarray(at + 124, at + 136).toString(), 8) / 512) * 512;
  }
  return { before, english, french, short: read.safeParse("a").success, long: read.safeParse("ab").success, answer, gzip, zlibAfter, packedNames };
}
`,
      );
      const esbuild = require("esbuild") as typeof import("esbuild");
      const out = join(dir, "parts.cjs");
      await esbuild.build({
        absWorkingDir: REPO,
        entryPoints: [join(dir, "entry.ts")],
        outfile: out,
        bundle: true,
        platform: "node",
        format: "cjs",
        target: "node22",
        logLevel: "error",
        plugins: [bundler.checkoutPlugin(REPO, out) as import("esbuild").Plugin],
      });
      const text = readFileSync(out, "utf8");
      // Each change is in place: the first call loads the real module.
      expect(text).toContain('servername: ""');
      expect(text).toContain('m ??= require("zlib")');
      expect(text).toContain('m ??= require("https")');
      expect(text).toContain("m ??= require_tar_fs()");
      expect(text).toContain("require_ignore()(...args)");
      expect(text).not.toContain("// ../main/node_modules/zod/v4/locales/fr.js\nvar error");
      const script = `require(${JSON.stringify(out)}).probe(${JSON.stringify(join(dir, "s.sock"))}).then((r) => process.stdout.write(JSON.stringify(r)));`;
      const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
      expect(r.stderr).toBe("");
      const { z } = require("zod") as typeof import("zod");
      expect(JSON.parse(r.stdout)).toEqual({
        before: { zlib: false, https: false, tls: false },
        english: z.string().safeParse(1).error?.issues[0]?.message,
        french: "Entrée invalide : chaîne de caractères attendu, nombre reçu",
        short: false,
        long: true,
        answer: { url: "/version", host: "localhost" },
        gzip: true,
        zlibAfter: true,
        packedNames: ["a.txt"],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("calls the Docker client's stand-ins with a message that names why", () => {
    const text = readFileSync(out, "utf8");
    expect(text).toContain("Docker over SSH is not loaded");
    expect(text).toContain("BuildKit sessions (image builds) is not loaded");
    expect(text).not.toMatch(/require\("ssh2"\)/);
  });
});
