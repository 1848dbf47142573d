// The checkout's front in one Node process (./sandbox runs `node toolchain/front.cjs <verb> ...`): the package
// build's compiled JavaScript (dist/, `npm run build`) when that build is fresh, else the TypeScript of cli/main.ts
// through tsx. Compiled, a task verb starts in a third of the CPU time. A stale build never runs: the build records
// the size and modification time of every file it was made from (dist/.sources, written only when none changed
// while it ran), and the build is fresh only while every one of them is as recorded; a file added since then is
// only reached through one that changed. Plain JavaScript, so that choosing costs no compile.
"use strict";
const { readdirSync, readFileSync, statSync, writeFileSync } = require("node:fs");
const { join, resolve } = require("node:path");

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
const STAMP = ".sources";

/** `path size mtime` of every source file, sorted: what a fresh build must still match. */
function sourceSnapshot(root) {
  const files = [...SOURCE_FILES];
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
    const s = statSync(path);
    return `${s.size} ${s.mtimeMs}`;
  } catch {
    return "missing";
  }
}

/**
 * Records `before` (taken before the build started) as the build's sources, unless a source changed while it ran:
 * then the build is left without a record, and so is never taken as fresh. Returns whether it recorded.
 */
function recordBuild(root, out, before) {
  const after = sourceSnapshot(root);
  if (after.join("\n") !== before.join("\n")) return false;
  writeFileSync(join(out, STAMP), `${before.join("\n")}\n`);
  return true;
}

/** True when dist/ holds a build of exactly the current sources. Reads one file and stats each source once. */
function freshBuild(root) {
  let recorded;
  try {
    recorded = readFileSync(join(root, "dist", STAMP), "utf8");
  } catch {
    return false;
  }
  for (const line of recorded.split("\n")) {
    if (line === "") continue;
    const at = line.indexOf(" ");
    if (fileMark(join(root, line.slice(0, at))) !== line.slice(at + 1)) return false;
  }
  return true;
}

/** Runs the front's verb (cli/main.ts's `runCommand`) with the process's arguments. */
async function runFront(root) {
  // Node keeps the compiled code of what it loads, so every run after the first starts faster.
  require("node:module").enableCompileCache?.();
  let entry = join(root, "dist", "cli", "main.js");
  if (!freshBuild(root)) {
    // The TypeScript: tsx's hooks for require() and for the import() by which main loads each verb's modules.
    require("tsx/cjs/api").register();
    (await import("tsx/esm/api")).register();
    entry = join(root, "cli", "main.ts");
  }
  await require(entry).runCommand(process.argv.slice(2), root);
}

module.exports = { freshBuild, recordBuild, sourceSnapshot };

if (require.main === module) void runFront(resolve(__dirname, ".."));
