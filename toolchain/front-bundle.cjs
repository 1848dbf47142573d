// The checkout's front as one file: cli/main.ts with every module it loads and the light packages they use (zod,
// yaml, the Docker client), bundled by esbuild into dist/front/sandbox.cjs. One file, loaded with V8's code of earlier
// runs (toolchain/front.cjs), starts a task verb in far less time than the same modules found and loaded one by one
// (bench/README.md, "Launch of one task"). The heavy packages stay outside it, loaded from node_modules by the verbs
// that use them (the Pulumi SDK, the Kubernetes client, PostgreSQL's), as the compiled build loads them.
//
// The bundle is the checkout's TypeScript, not the package build: every `__dirname` of a source names that source's
// own folder in the checkout, so the files the code finds beside itself (the engine session wrapper, the toolchain
// manifest) are the checkout's, as under tsx; the one program it starts by path, the watchdog, is compiled beside the
// bundle from the same sources. A bundle runs only while fresh: the size and modification time of every file it was
// made from (the sources, package.json, the installed packages' lock) and of the files it made are recorded beside
// it, and toolchain/front.cjs checks them before every run. Built by `npm run build` and, when stale, by the front
// itself. Plain JavaScript, loaded only to build.
"use strict";
const { existsSync, mkdirSync, readFileSync, renameSync, rmSync } = require("node:fs");
const { basename, dirname, join, relative, sep } = require("node:path");

/** Where the bundle goes, from the checkout's root. */
const { BUNDLE } = require("./front.cjs");

/** Packages the bundle leaves to node_modules: loaded by stack, Kubernetes and shared-ledger verbs only. */
const EXTERNAL = [
  "@pulumi/*",
  "@kubernetes/client-node",
  "pg",
  "ssh2",
  "cpu-features",
  "@grpc/*",
  "protobufjs",
];

/**
 * dockerode loads BuildKit sessions and Docker over SSH whatever the call; the front uses neither (cli/lean-docker.ts
 * says why). In the bundle those two files are stand-ins that fail naming why if anything ever calls them.
 */
const STAND_INS = [
  { file: /[\\/]dockerode[\\/]lib[\\/]session\.js$/, what: "BuildKit sessions (image builds)" },
  { file: /[\\/]docker-modem[\\/]lib[\\/]ssh\.js$/, what: "Docker over SSH" },
];

/**
 * zod modules no verb of the front uses, which zod's namespace loads whatever the call: every language's error
 * messages but English (which zod's schemas load themselves) and the JSON Schema reader. Loaded at every start they
 * cost several milliseconds (sixty modules evaluated); in the bundle each is a stand-in whose exports load the
 * real module on their first call and then do exactly what it does: `z.locales.fr()` and `z.fromJSONSchema()` work.
 * Each entry: the file, and the function names it exports (read from the file: re-exports of one module's default
 * each, or one function of its own).
 */
const ON_FIRST_CALL = [
  { file: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/, reexports: true },
  { file: /[\\/]zod[\\/]v4[\\/]classic[\\/]from-json-schema\.js$/, functions: ["fromJSONSchema"] },
];
/** The namespace by which a stand-in reaches the real module it stands for. */
const REAL = "sandbox-real";

/**
 * The stand-in of `path` (an ES module): each exported function loads its module on first call. A module that
 * re-exports the defaults of others (`export { default as x } from "./x.js"`) loads only the one called; a module
 * of its own functions is loaded whole, from {@link REAL}. Throws when the file holds another kind of export, so that a
 * new version of the package is never bundled with a stand-in that misses one.
 */
function onFirstCall(path, entry) {
  const text = readFileSync(path, "utf8");
  const lines = [];
  if (entry.reexports) {
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const m = /^export \{ default as ([A-Za-z_$][\w$]*) \} from ("\.\/[\w.-]+\.js");$/.exec(line);
      if (m === null) throw new Error(`${path}: a line the bundle's stand-in does not know: ${line}`);
      lines.push(`export function ${m[1]}(...args) { return require(${m[2]}).default(...args); }`);
    }
  } else {
    const exports = /^export\s+(?:(?:async\s+)?function\*?|const|let|var|class|\{|\*|default)\s*([\w$]*)/gm;
    const names = [...text.matchAll(exports)].map((m) => m[1]);
    const known = entry.functions.join(", ");
    if (names.join(", ") !== known)
      throw new Error(`${path}: exports ${names.join(", ")}, the bundle's stand-in knows ${known}`);
    const real = JSON.stringify(`${REAL}:${basename(path)}`);
    for (const name of names)
      lines.push(`export function ${name}(...args) { return require(${real}).${name}(...args); }`);
  }
  return { contents: `${lines.join("\n")}\n`, loader: "js", resolveDir: dirname(path) };
}

/**
 * A stand-in for the module `name` (Node's own, or a package the bundle holds): loaded on the first use of any of its
 * properties, then exactly that module.
 */
const lazyModule = (name) =>
  `(() => { let m; const load = () => (m ??= require(${JSON.stringify(name)})); return new Proxy({}, { ` +
  "get: (_, k) => load()[k], has: (_, k) => k in load(), ownKeys: () => Reflect.ownKeys(load()), " +
  "getOwnPropertyDescriptor: (_, k) => { const d = Reflect.getOwnPropertyDescriptor(load(), k); " +
  "return d === undefined ? undefined : { ...d, configurable: true }; } }); })()";

/**
 * Changes to the Docker client's files in the bundle, each for what it costs every task verb's start and for a path
 * the front never takes (it drives the local engine over its unix socket only, and builds no image). Each `find`
 * must occur exactly once, or the bundle is not built: a new version of the package is never bundled half changed.
 */
/** The Docker client's helpers: one pattern for all of its changes, which are made in one pass. */
const DOCKERODE_UTIL = /[\\/]dockerode[\\/]lib[\\/]util\.js$/;
const PATCHES = [
  {
    // zlib gzips image build contexts only: loaded with the client it costs 2 ms.
    file: DOCKERODE_UTIL,
    find: "require('zlib')",
    replace: lazyModule("zlib"),
  },
  {
    // tar-fs (and tar-stream, pump, bl and the rest) and the .dockerignore reader pack image build contexts only:
    // evaluated with the client they cost every task verb 2 to 4 ms. The reader is a function, called as one.
    file: DOCKERODE_UTIL,
    find: "require('tar-fs')",
    replace: lazyModule("tar-fs"),
  },
  {
    file: DOCKERODE_UTIL,
    find: "require('@balena/dockerignore')",
    replace: '((...args) => require("@balena/dockerignore")(...args))',
  },
  {
    // https (and TLS) serve an engine over TCP only.
    file: /[\\/]docker-modem[\\/]lib[\\/]http\.js$/,
    find: "require('https')",
    replace: lazyModule("https"),
  },
  {
    // Node's HTTP agent names the TLS server of every request unless told, and to do so tests whether "localhost" is
    // an IP address: its IPv6 pattern, compiled at the first request of a process, costs 4 to 5 ms. A request over a
    // unix socket has no TLS server to name.
    file: /[\\/]docker-modem[\\/]lib[\\/]modem\.js$/,
    find: "  var optionsf = {\n",
    replace: '  var optionsf = {\n    servername: "",\n',
  },
];

/** `path`'s text with its {@link PATCHES}; throws when one does not occur exactly once. */
function patched(path, patches) {
  let text = readFileSync(path, "utf8");
  for (const { find, replace } of patches) {
    const at = text.indexOf(find);
    if (at === -1 || text.indexOf(find, at + 1) !== -1)
      throw new Error(`${path}: the bundle's change of ${JSON.stringify(find)} needs it exactly once`);
    text = text.slice(0, at) + replace + text.slice(at + find.length);
  }
  return text;
}

/**
 * Programs the code starts by path, compiled beside the bundle from the same sources: the watchdog (runtime/
 * orphan-watch.ts), which runtime/watchdog.ts looks for beside itself. Run as TypeScript it costs a tenth of a second
 * of CPU at every launch, while the task starts.
 */
const PROGRAMS = [
  { source: "runtime/orphan-watch.ts", out: "orphan-watch.cjs", foundBy: "runtime/watchdog.ts" },
];

/**
 * `__dirname` of the source `file` (relative to `root`), in a bundle at `out`: that source's folder in the checkout,
 * found from the bundle's own place (so that a checkout moved with its bundle still finds its files); for a source
 * that finds one of {@link PROGRAMS}, the bundle's folder, where the compiled program is.
 */
function dirnameOf(root, out, file) {
  if (PROGRAMS.some((p) => p.foundBy === file)) return "__dirname";
  const path = relative(dirname(out), join(root, dirname(file)))
    .split(sep)
    .join("/");
  return `require("node:path").join(__dirname, ${JSON.stringify(path)})`;
}

/** esbuild's hooks: the checkout's `__dirname` in every source, and the Docker client's stand-ins. */
function checkoutPlugin(root, out) {
  return {
    name: "sandbox-checkout",
    setup(build) {
      for (const { file, what } of STAND_INS) {
        const why = `the sandbox front drives the local Docker engine over its unix socket; ${what} is not loaded`;
        build.onLoad({ filter: file }, () => ({
          contents: `module.exports = () => { throw new Error(${JSON.stringify(why)}); };`,
          loader: "js",
        }));
      }
      for (const file of new Set(PATCHES.map((p) => p.file))) {
        build.onLoad({ filter: file }, (args) => ({
          contents: patched(
            args.path,
            PATCHES.filter((p) => p.file === file),
          ),
          loader: "js",
        }));
      }
      for (const entry of ON_FIRST_CALL) {
        build.onLoad({ filter: entry.file }, (args) =>
          args.namespace === "file" ? onFirstCall(args.path, entry) : undefined,
        );
      }
      build.onResolve({ filter: new RegExp(`^${REAL}:`) }, (args) => ({
        path: relative(root, join(args.resolveDir, args.path.slice(REAL.length + 1))),
        namespace: REAL,
      }));
      build.onLoad({ filter: /.*/, namespace: REAL }, (args) => ({
        contents: readFileSync(join(root, args.path), "utf8"),
        loader: "js",
        resolveDir: dirname(join(root, args.path)),
      }));
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const file = relative(root, args.path);
        if (file.startsWith("..") || file.split(sep).includes("node_modules")) return undefined;
        const text = readFileSync(args.path, "utf8");
        const checkoutDirname = dirnameOf(root, out, file.split(sep).join("/"));
        return { contents: text.replace(/\b__dirname\b/g, checkoutDirname), loader: "ts" };
      });
    },
  };
}

/**
 * Builds the bundle of the checkout at `root` (at `out`, {@link BUNDLE} by default) and records what it was made
 * from beside it, unless a file changed while it ran (then the bundle has no record, and the front does not run it).
 * Returns whether a fresh bundle is in place. `front` is toolchain/front.cjs (its snapshot and record). Safe to run
 * from two processes at once: each writes its own file and renames it into place, then its record.
 */
async function buildBundle(root, front, out = join(root, BUNDLE)) {
  const esbuild = require("esbuild");
  const before = front.sourceSnapshot(root, "bundle");
  // Minified but for names (which the code and its messages may read): a third less text to read and decode.
  const common = {
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    minifyWhitespace: true,
    minifySyntax: true,
  };
  const builds = [
    {
      ...common,
      entryPoints: [join(root, "cli", "main.ts")],
      outfile: out,
      external: EXTERNAL,
      // `require.main === module` guards the modules that are also programs: in the bundle none of them is.
      define: { "require.main": "undefined" },
      logLevel: "error",
      // main.ts's guard above reads `module`, which in the bundle is the bundle's own: what the guard needs.
      logOverride: { "commonjs-variable-in-esm": "silent" },
      plugins: [checkoutPlugin(root, out)],
    },
    // The programs import Node's own modules only, and run as themselves: their own guards stand.
    ...PROGRAMS.filter((p) => existsSync(join(root, p.source))).map((p) => ({
      ...common,
      entryPoints: [join(root, p.source)],
      outfile: join(dirname(out), p.out),
      logLevel: "error",
    })),
  ];
  mkdirSync(dirname(out), { recursive: true });
  const parts = builds.map((b) => ({ to: b.outfile, part: `${b.outfile}.${process.pid}.part` }));
  try {
    await Promise.all(builds.map((b, i) => esbuild.build({ ...b, outfile: parts[i].part })));
    // The programs first: the bundle, renamed last, is what a front looks for.
    for (const { to, part } of parts.reverse()) renameSync(part, to);
  } finally {
    for (const { part } of parts) rmSync(part, { force: true });
  }
  return front.recordSources(
    root,
    out,
    before,
    "bundle",
    parts.map((p) => p.to),
  );
}

module.exports = { EXTERNAL, buildBundle, checkoutPlugin };

// `node toolchain/front-bundle.cjs`: builds the checkout's bundle (`npm run build` does too).
if (require.main === module) {
  const root = join(__dirname, "..");
  buildBundle(root, require("./front.cjs")).then(
    (fresh) => {
      if (!fresh)
        process.stderr.write("front-bundle: sources changed during the build; the front will not run it\n");
      else process.stderr.write(`front-bundle: built ${BUNDLE}\n`);
    },
    (e) => {
      process.stderr.write(`front-bundle: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
