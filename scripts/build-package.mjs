#!/usr/bin/env node
// Builds what the npm package ships in dist/: the TypeScript compiled by tsc (tsconfig.build.json: CommonJS and
// .d.ts files, the source tree's layout), the files the compiled code reads beside itself (the toolchain manifest),
// and the two launchers it starts by path: the engine session wrapper (cli/engine-session/bin/pulumi, as in a
// checkout) and the local Docker provider's `pulumi-resource-docker`, which runs the compiled provider. Run by
// `npm run build` and before `npm pack`. Built into the checkout's own dist/, it also makes the checkout front's bundle
// (toolchain/front-bundle.cjs: dist/front/sandbox.cjs, which the package does not ship).
//
//   node scripts/build-package.mjs [--out-dir <dir>]   (default dist; the consumer test builds into a cache)
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import front from "../toolchain/front.cjs";
import frontBundle from "../toolchain/front-bundle.cjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const at = process.argv.indexOf("--out-dir");
const out = at === -1 ? join(root, "dist") : resolve(process.argv[at + 1] ?? "");

// A clean build: files the sources no longer have must not ship.
rmSync(out, { recursive: true, force: true });
// What the build is made from, for the checkout's front (toolchain/front.cjs), which runs a build only while fresh.
const sources = front.sourceSnapshot(root);
const tsc = spawnSync(
  process.execPath,
  [
    join(root, "node_modules", "typescript", "bin", "tsc"),
    "-p",
    join(root, "tsconfig.build.json"),
    "--outDir",
    out,
  ],
  { stdio: "inherit" },
);
if (tsc.status !== 0) {
  process.stderr.write(`build-package: tsc failed (exit ${tsc.status})\n`);
  process.exit(1);
}

const executable = (file, text) => {
  mkdirSync(dirname(file), { recursive: true });
  if (text === undefined) copyFileSync(join(root, relative(out, file)), file);
  else writeFileSync(file, text);
  chmodSync(file, 0o755);
};
executable(join(out, "cli", "engine-session", "bin", "pulumi"));
// The toolchain manifest, which the compiled toolchain/manifest.js reads beside itself.
copyFileSync(join(root, "toolchain", "versions.env"), join(out, "toolchain", "versions.env"));
executable(
  join(out, "providers", "docker", "pulumi-resource-docker"),
  [
    "#!/bin/sh",
    "# The toolkit's local Docker provider, compiled: the engine starts it as the `docker` resource plugin when this",
    "# folder is first on the engine's PATH (where the official plugin is not installed). It runs on $SANDBOX_NODE,",
    "# else the `node` on PATH (Node 22 or later).",
    "set -eu",
    'here="$(cd "$(dirname "$0")" && pwd)"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'exec "${SANDBOX_NODE:-node}" "$here/main.js" "$@"',
    "",
  ].join("\n"),
);

// Every file package.json points at must exist, or the package is broken however it was built.
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const targets = [
  ...Object.values(pkg.bin ?? {}),
  ...Object.values(pkg.exports ?? {}).flatMap((e) => (typeof e === "string" ? [e] : Object.values(e))),
].filter((t) => t.startsWith("./dist/") || t.startsWith("dist/"));
const missing = targets.filter((t) => !existsSync(join(out, relative("dist", t.replace(/^\.\//, "")))));
if (missing.length > 0) {
  process.stderr.write(
    `build-package: package.json names files the build did not make: ${missing.join(", ")}\n`,
  );
  process.exit(1);
}
if (!front.recordBuild(root, out, sources))
  process.stderr.write("build-package: sources changed during the build; ./sandbox will not run it\n");
if (out === join(root, "dist")) {
  // The checkout front's bundle: optional (the front builds it when missing, or runs the build above), so a bundle
  // that cannot be made is said, not a failed package build.
  try {
    if (!(await frontBundle.buildBundle(root, front)))
      process.stderr.write(
        "build-package: sources changed during the bundle's build; ./sandbox will not run it\n",
      );
  } catch (e) {
    process.stderr.write(`build-package: no front bundle (${e instanceof Error ? e.message : String(e)})\n`);
  }
}
process.stderr.write(`build-package: built ${relative(process.cwd(), out) || "."}\n`);
