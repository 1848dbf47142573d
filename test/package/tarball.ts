// The package as npm publishes it, for the consumer test: the compiled build (scripts/build-package.mjs) staged with
// the files package.json's `files` names, and `npm pack`ed. The tarball is cached by a hash of everything that goes
// into it, under `${XDG_CACHE_HOME:-~/.cache}/sandbox-projects/package/<hash>/`, so an unchanged tree reuses it.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { toolCacheDir } from "../../toolchain/manifest";

export const ROOT = resolve(__dirname, "..", "..");

/** What the build reads (tsconfig.build.json's roots, and toolchain/ for what they import) and what the package ships. */
const INPUTS = [
  "index.ts",
  "components",
  "policy",
  "runtime",
  "cli",
  "providers",
  "stacks",
  "toolchain",
  "policy-pack",
  "docs",
  "scripts/build-package.mjs",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "README.md",
  "LICENSE",
  "CHANGELOG.md",
];

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

/** A hash of every input's path and content. */
export function sourceHash(): string {
  const h = createHash("sha256");
  for (const file of INPUTS.flatMap((i) => filesUnder(join(ROOT, i)))) {
    h.update(`${relative(ROOT, file)}\0`);
    h.update(readFileSync(file));
    h.update("\0");
  }
  return h.digest("hex").slice(0, 20);
}

function run(cmd: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

/** The package's name and version, from package.json. */
export function packageInfo(): { name: string; version: string } {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    name: string;
    version: string;
  };
  return { name: pkg.name, version: pkg.version };
}

/**
 * The path of the packed tarball of the current tree, built and packed on first use. `timings` receives how long the
 * build and `npm pack` took (nothing when the cache had it).
 */
export function packedTarball(timings: (step: string, seconds: number) => void = () => undefined): string {
  const dir = join(toolCacheDir(), "package", sourceHash());
  const { name, version } = packageInfo();
  const tarball = join(dir, `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`);
  if (existsSync(tarball)) return tarball;
  const work = join(dir, `stage-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  let t = Date.now();
  run(process.execPath, [join(ROOT, "scripts", "build-package.mjs"), "--out-dir", join(work, "dist")], ROOT);
  timings("build (tsc)", (Date.now() - t) / 1000);
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { files: string[] };
  for (const entry of ["package.json", "README.md", "LICENSE", ...pkg.files]) {
    if (entry.startsWith("dist/")) continue;
    cpSync(join(ROOT, entry), join(work, entry), { recursive: true });
  }
  t = Date.now();
  const out = join(work, "out");
  mkdirSync(out);
  // The build ran above; --ignore-scripts keeps `prepack` from building a second time.
  run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", out], work);
  timings("npm pack", (Date.now() - t) / 1000);
  const [packed] = readdirSync(out).filter((f) => f.endsWith(".tgz"));
  if (packed === undefined) throw new Error(`npm pack wrote no tarball in ${out}`);
  renameSync(join(out, packed), tarball);
  rmSync(work, { recursive: true, force: true });
  // Tarballs of earlier trees are not used again: the cache keeps the current one only.
  for (const other of readdirSync(dirname(dir))) {
    if (join(dirname(dir), other) !== dir)
      rmSync(join(dirname(dir), other), { recursive: true, force: true });
  }
  return tarball;
}
