// The checkout's front in one Node process (./sandbox runs `node toolchain/front.cjs <verb> ...`), in the first of
// these that is fresh: the checkout's bundle (dist/front/sandbox.cjs, toolchain/front-bundle.cjs), built here when
// stale; the package build's compiled JavaScript (dist/, `npm run build`); else the TypeScript of cli/main.ts
// through tsx. The bundle starts a task verb in a fraction of the time of the others. Stale code never runs: each
// build records the size and modification time of every file it was made from (and the bundle its own), written only
// when none changed while it ran, and a build is fresh only while every one of them is as recorded; a file added
// since then is only reached through one that changed. `SANDBOX_FRONT_BUILD=never` keeps the front from building
// the bundle (a stale one then gives way to the package build or tsx). Plain JavaScript, so that choosing costs no
// compile.
"use strict";
const {
  closeSync,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} = require("node:fs");
const { dirname, join, relative, resolve, sep } = require("node:path");

/** The files a build is made from (tsconfig.build.json's sources, and what the build copies beside them). */
const SOURCE_FOLDERS = ["components", "policy", "runtime", "cli", "providers", "stacks"];
const SOURCE_FILES = [
  "index.ts",
  "tsconfig.json",
  "tsconfig.build.json",
  "toolchain/manifest.ts",
  "toolchain/pulumi.ts",
  "toolchain/versions.env",
  "cli/engine-session/bin/pulumi",
];
/** What the bundle holds besides the sources: the packages it bundles (as installed) and package.json. */
const BUNDLE_FILES = [
  "package.json",
  "package-lock.json",
  "node_modules/.package-lock.json",
  "toolchain/front-bundle.cjs",
];
const STAMP = ".sources";
/** The bundle, from the root (built by toolchain/front-bundle.cjs, which is loaded only to build). */
const BUNDLE = join("dist", "front", "sandbox.cjs");

/** `path size mtime` of every file a build of `kind` ("build" or "bundle") is made from, sorted. */
function sourceSnapshot(root, kind = "build") {
  const files = [...SOURCE_FILES, ...(kind === "bundle" ? BUNDLE_FILES : [])];
  for (const folder of SOURCE_FOLDERS) {
    let found = [];
    try {
      found = readdirSync(join(root, folder), { recursive: true, encoding: "utf8" });
    } catch {
      // no such folder: nothing of it to record
    }
    for (const f of found) if (f.endsWith(".ts")) files.push(join(folder, f));
  }
  return [...new Set(files)].sort().map((f) => `${f} ${fileMark(join(root, f))}`);
}

function fileMark(path) {
  try {
    const s = statSync(path, { throwIfNoEntry: false });
    return s === undefined ? "missing" : `${s.size} ${s.mtimeMs}`;
  } catch {
    return "missing";
  }
}

/**
 * Records `before` (taken before the build started) as the sources of the build at `out` (the package build's
 * folder, or the bundle's file), unless a source changed while it ran: then the build is left without a record, and
 * so is never taken as fresh. A bundle's record names the files it made too (`made`: the bundle and the programs
 * beside it), so that another build's renamed over them later is not taken as this one. Returns whether it recorded.
 */
function recordSources(root, out, before, kind = "build", made = [out]) {
  const after = sourceSnapshot(root, kind);
  const dir = kind === "bundle" ? dirname(out) : out;
  rmSync(join(dir, STAMP), { force: true });
  if (after.join("\n") !== before.join("\n")) return false;
  const own = kind === "bundle" ? made.map((f) => `${relative(root, f)} ${fileMark(f)}`) : [];
  writeFileSync(join(dir, STAMP), `${[...before, ...own].join("\n")}\n`);
  return true;
}

/** The package build's record (scripts/build-package.mjs). */
function recordBuild(root, out, before) {
  return recordSources(root, out, before, "build");
}

/** True when the record in `dir` names files that are all as recorded. Reads one file, stats each file once. */
function freshAgainst(root, dir) {
  let recorded;
  try {
    recorded = readFileSync(join(dir, STAMP), "utf8");
  } catch {
    return false;
  }
  // Paths joined by hand: this runs before every verb, and path.join's normalizing is a third of its time.
  const prefix = root.endsWith(sep) ? root : root + sep;
  for (const line of recorded.split("\n")) {
    if (line === "") continue;
    const at = line.indexOf(" ");
    if (fileMark(prefix + line.slice(0, at)) !== line.slice(at + 1)) return false;
  }
  return true;
}

/** True when dist/ holds a build of exactly the current sources. */
function freshBuild(root) {
  return freshAgainst(root, join(root, "dist"));
}

/** True when the bundle was made from exactly the current sources and packages, and is the file it recorded. */
function freshBundle(root) {
  return freshAgainst(root, join(root, BUNDLE, ".."));
}

/**
 * Which front runs for the checkout at `root`: `bundle`, `build` or `tsx` (see the top of this file). A stale bundle
 * is built again first; a build that fails (no esbuild, a source that does not compile, a folder not writable) leaves
 * the choice to the others, and tsx then reports what does not compile.
 */
async function chooseFront(root, { rebuild = true } = {}) {
  if (freshBundle(root)) return "bundle";
  if (rebuild) {
    try {
      if (await require("./front-bundle.cjs").buildBundle(root, module.exports)) return "bundle";
    } catch {
      // no bundle this time
    }
  }
  return freshBuild(root) ? "build" : "tsx";
}

/**
 * Loads the bundle at `file` with V8's compiled code of an earlier run, kept beside it in `<file>.code-cache`. Node's
 * own compile cache keeps only what V8 compiles before the code runs, which in a bundle is little more than its top
 * (every module's body is compiled when first used); this cache is made after a verb ran, so it holds the functions
 * that verb used (measured: 30 to 40 ms less CPU at each start). V8 checks a cache against the source's length only,
 * so the cache names the bundle it was made from and is used for that bundle alone: the file's inode, size and
 * modification time, read from the open file whose bytes are then compiled. A bundle is never rewritten in place
 * (each build renames a new file over it), so another bundle is another inode or time; naming it so costs one fstat,
 * where a checksum read all of its 3 MB (and loaded zlib) at every start. Returns the bundle's exports and
 * `keep(verb)`, which writes the cache after a verb it does not hold yet (each verb once).
 */
function loadBundle(file) {
  const vm = require("node:vm");
  const Module = require("node:module");
  const fd = openSync(file, "r");
  let bytes;
  let made;
  try {
    const s = fstatSync(fd, { bigint: true });
    made = `${s.ino} ${s.size} ${s.mtimeNs}`;
    bytes = readFileSync(fd);
  } finally {
    closeSync(fd);
  }
  const cacheFile = `${file}.code-cache`;
  let cachedData;
  let verbs = [];
  try {
    const kept = readFileSync(cacheFile);
    const header = JSON.parse(kept.subarray(0, kept.indexOf(10)).toString("utf8"));
    if (header.made === made && Array.isArray(header.verbs)) {
      cachedData = kept.subarray(kept.indexOf(10) + 1);
      verbs = header.verbs;
    }
  } catch {
    // no cache, or not one of this bundle: compiled as it runs
  }
  const script = new vm.Script(Module.wrap(bytes.toString("utf8")), {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const mod = new Module(file, module);
  mod.filename = file;
  script
    .runInThisContext()
    .call(mod.exports, mod.exports, Module.createRequire(file), mod, file, dirname(file));
  mod.loaded = true;
  const keep = (verb) => {
    if (cachedData !== undefined && !script.cachedDataRejected && verbs.includes(verb)) return;
    try {
      const header = JSON.stringify({
        made,
        verbs: [...new Set([...(script.cachedDataRejected ? [] : verbs), verb])],
      });
      const part = `${cacheFile}.${process.pid}`;
      writeFileSync(part, Buffer.concat([Buffer.from(`${header}\n`), script.createCachedData()]));
      require("node:fs").renameSync(part, cacheFile);
    } catch {
      // not kept: the next run compiles as this one did
    }
  };
  return { exports: mod.exports, keep };
}

/** Runs the front's verb (cli/main.ts's `runCommand`) with the process's arguments. */
async function runFront(root) {
  // Node keeps the compiled code of what it loads, so every run after the first starts faster.
  require("node:module").enableCompileCache?.();
  const argv = process.argv.slice(2);
  const front = await chooseFront(root, { rebuild: process.env.SANDBOX_FRONT_BUILD !== "never" });
  if (front === "bundle") {
    const bundle = loadBundle(join(root, BUNDLE));
    await bundle.exports.runCommand(argv, root);
    bundle.keep(/^[a-z][a-z-]{0,19}$/.test(argv[0] ?? "help") ? (argv[0] ?? "help") : "other");
    return;
  }
  let entry = join(root, "dist", "cli", "main.js");
  if (front === "tsx") {
    // The TypeScript: tsx's hooks for require() and for the import() by which main loads each verb's modules.
    require("tsx/cjs/api").register();
    (await import("tsx/esm/api")).register();
    entry = join(root, "cli", "main.ts");
  }
  await require(entry).runCommand(argv, root);
}

module.exports = {
  BUNDLE,
  chooseFront,
  freshBuild,
  freshBundle,
  recordBuild,
  recordSources,
  sourceSnapshot,
};

if (require.main === module) void runFront(resolve(__dirname, ".."));
