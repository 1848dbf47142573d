import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, delimiter, dirname, join } from "node:path";
import { cachedToolPath, TOOLCHAIN, toolCacheDir } from "./manifest";

/** Where the toolkit keeps the Pulumi CLI it built: `<cache>/<PULUMI_CACHE_FOLDER>/v<PULUMI_VERSION>/bin/pulumi`. */
export function cachedPulumiPath(env: NodeJS.ProcessEnv = process.env): string {
  return cachedToolPath(TOOLCHAIN.PULUMI_CACHE_FOLDER, TOOLCHAIN.PULUMI_VERSION, "pulumi", env);
}

/** The first executable called `name` on `PATH`, or undefined. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Compares dotted versions numerically: negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.replace(/^v/, "").split(/[.+-]/).map(Number);
  const pb = b.replace(/^v/, "").split(/[.+-]/).map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (Number.isNaN(d)) return 0;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Where the running toolkit keeps its own files, which the stack verbs hand to the engine. In a checkout they are
 * under the root the front runs on (`policy/`, `providers/docker/`). Installed from the package, the code runs from
 * `<package>/dist/` and they are the package's: `policy-pack/` and the compiled `dist/providers/docker/`, whatever
 * folder the front runs in.
 */
export interface ToolkitFiles {
  /** True when the code runs from the installed package, false in a checkout. */
  readonly installed: boolean;
  /** The policy pack's folder: its `PulumiPolicy.yaml` and the `run-pack` launcher. */
  readonly policyPack: string;
  /**
   * The folder of the toolkit's own Docker provider, `pulumi-resource-docker`, served when the official plugin is not
   * installed. `SANDBOX_DOCKER_PROVIDER=official` refuses the fallback; `=local` uses it even when the official
   * plugin is there.
   */
  readonly dockerProvider: string;
}

/**
 * The toolkit's files for a front running on `root`. `codeDir` is this module's folder: `<package>/dist/toolchain`
 * when installed (the package's `policy-pack/` beside `dist/`), `<checkout>/toolchain` otherwise.
 */
export function toolkitFiles(root: string, codeDir: string = __dirname): ToolkitFiles {
  const pkg = dirname(dirname(codeDir));
  // A checkout's own build (dist/ beside the sources, which the package does not ship) runs as the checkout.
  const packaged = !existsSync(join(pkg, "cli", "main.ts"));
  if (
    basename(dirname(codeDir)) === "dist" &&
    packaged &&
    existsSync(join(pkg, "policy-pack", "PulumiPolicy.yaml"))
  ) {
    return {
      installed: true,
      policyPack: join(pkg, "policy-pack"),
      dockerProvider: join(pkg, "dist", "providers", "docker"),
    };
  }
  return {
    installed: false,
    policyPack: join(root, "policy"),
    dockerProvider: join(root, "providers", "docker"),
  };
}

/** What was found of the Pulumi toolchain, and what is missing, in words a person can act on. */
export interface ToolchainReport {
  /** Path of a usable Pulumi CLI, when there is one. */
  readonly pulumi?: { readonly path: string; readonly version: string };
  /** Where each required resource plugin was found, by package. */
  readonly plugins: Readonly<Record<string, string | undefined>>;
  /** Folders to put first on the engine's PATH so it finds the plugins chosen here (the local Docker provider). */
  readonly pathPrepend: readonly string[];
  /** One line per missing piece. */
  readonly missing: readonly string[];
  /** True for the installed front, which finds the Pulumi CLI on PATH only and cannot build one. */
  readonly installed: boolean;
}

/** The Pulumi home the toolkit uses: `PULUMI_HOME` when set, else a project-owned folder. */
export function pulumiHome(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.PULUMI_HOME && env.PULUMI_HOME !== "" ? env.PULUMI_HOME : join(root, ".sandbox", "pulumi-home");
}

/**
 * The version a Pulumi CLI reports, asked once per binary: remembered in the tool cache's `pulumi-versions.json`
 * by the binary's path, size and modification time, so that a replaced or rebuilt CLI is asked again. A cache that
 * cannot be read or written only costs the question.
 */
export function versionOf(path: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const memo = join(toolCacheDir(env), "pulumi-versions.json");
  let mark: string;
  try {
    const st = statSync(realpathSync(path));
    mark = `${st.size} ${st.mtimeMs}`;
  } catch {
    return undefined;
  }
  let known: Record<string, { mark: string; version: string }> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(memo, "utf8"));
    if (typeof parsed === "object" && parsed !== null) known = parsed as typeof known;
  } catch {
    // none yet, or unreadable: asked below
  }
  const hit = known[path];
  if (hit !== undefined && hit.mark === mark && typeof hit.version === "string") return hit.version;
  const r = spawnSync(path, ["version"], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) return undefined;
  const version = r.stdout.trim().replace(/^v/, "");
  try {
    mkdirSync(dirname(memo), { recursive: true });
    const tmp = `${memo}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ ...known, [path]: { mark, version } }));
    renameSync(tmp, memo);
  } catch {
    // a read-only cache: asked again next time
  }
  return version;
}

/** Finds a resource plugin: `pulumi-resource-<pkg>` on PATH, or an installed `resource-<pkg>-v*` folder. */
export function findResourcePlugin(
  pkg: string,
  home: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const bin = onPath(`pulumi-resource-${pkg}`, env);
  if (bin !== undefined) return bin;
  const plugins = join(home, "plugins");
  if (!existsSync(plugins)) return undefined;
  const dir = readdirSync(plugins)
    .filter((d) => d.startsWith(`resource-${pkg}-v`) && !d.endsWith(".lock") && !d.endsWith(".partial"))
    .sort()
    .pop();
  return dir === undefined ? undefined : join(plugins, dir);
}

/**
 * Looks for the Pulumi CLI and the resource plugins `packages` need. A checkout takes the CLI from PATH, then from
 * the toolkit's cache (what `toolchain/setup.sh` built); the installed front from PATH only, since the package
 * cannot build one.
 */
export function inspectToolchain(
  root: string,
  packages: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  files: ToolkitFiles = toolkitFiles(root),
): ToolchainReport {
  const missing: string[] = [];
  const cached = cachedPulumiPath(env);
  const installed = files.installed;
  let pulumi: ToolchainReport["pulumi"];
  const candidates = [onPath("pulumi", env), installed || !existsSync(cached) ? undefined : cached];
  for (const path of candidates) {
    if (path === undefined) continue;
    const version = versionOf(path, env);
    if (version !== undefined && compareVersions(version, TOOLCHAIN.MIN_PULUMI_VERSION) >= 0) {
      pulumi = { path, version };
      break;
    }
    missing.push(
      `the Pulumi CLI at ${path} is ${version === undefined ? "not runnable" : `v${version}`}; the toolkit needs v${TOOLCHAIN.MIN_PULUMI_VERSION} or later`,
    );
  }
  if (pulumi === undefined) {
    missing.push(
      installed
        ? `the Pulumi CLI: no \`pulumi\` v${TOOLCHAIN.MIN_PULUMI_VERSION} or later on PATH`
        : `the Pulumi CLI: no \`pulumi\` on PATH and none cached at ${cached}`,
    );
  }
  const home = pulumiHome(root, env);
  const plugins: Record<string, string | undefined> = {};
  const pathPrepend: string[] = [];
  for (const pkg of packages) {
    const choice = env.SANDBOX_DOCKER_PROVIDER;
    plugins[pkg] = pkg === "docker" && choice === "local" ? undefined : findResourcePlugin(pkg, home, env);
    if (pkg === "docker" && plugins[pkg] === undefined && choice !== "official") {
      const local = join(files.dockerProvider, "pulumi-resource-docker");
      if (existsSync(local)) {
        plugins[pkg] = local;
        pathPrepend.push(files.dockerProvider);
      }
    }
    if (plugins[pkg] === undefined) {
      missing.push(
        `the Pulumi ${pkg} resource plugin: no \`pulumi-resource-${pkg}\` on PATH and none installed under ${join(home, "plugins")}`,
      );
    }
  }
  const report = { plugins, pathPrepend, missing, installed };
  return pulumi === undefined ? report : { pulumi, ...report };
}

/** The message the front prints when the engine cannot run: what is missing and how to get it. */
export function missingToolchainMessage(verb: string, stack: string, report: ToolchainReport): string {
  const min = TOOLCHAIN.MIN_PULUMI_VERSION;
  const howTo = report.installed
    ? [
        `  - install the Pulumi CLI v${min} or later (https://www.pulumi.com/docs/install/) and put \`pulumi\` on PATH;`,
        "    the installed package cannot build one (a checkout of the toolkit can: toolchain/setup.sh builds it from",
        `    the Go module proxy with Go ${TOOLCHAIN.MIN_GO_VERSION} or later); the package's own Docker provider needs nothing;`,
        "  - for Kubernetes projects: `pulumi plugin install resource kubernetes`, or put `pulumi-resource-kubernetes`",
        "    on PATH, or point PULUMI_HOME at a Pulumi home that holds it.",
      ]
    : [
        "  - with internet access: install the Pulumi CLI (https://www.pulumi.com/docs/install/), then",
        "    `pulumi plugin install resource docker` (and `kubernetes` for Kubernetes projects);",
        "  - without downloads: `bash toolchain/setup.sh` builds the CLI and the Kubernetes plugin from the Go module",
        `    proxy and caches them (it needs Go ${TOOLCHAIN.MIN_GO_VERSION} or later); the toolkit's own Docker provider needs nothing;`,
        "  - point PULUMI_HOME at a Pulumi home that already holds the plugins, or put `pulumi-resource-<pkg>` on PATH.",
      ];
  return [
    `cannot ${verb} stack "${stack}": the Pulumi engine is not available on this machine.`,
    ...report.missing.map((m) => `  missing: ${m}`),
    "How to get it:",
    ...howTo,
    "Nothing was deployed.",
  ].join("\n");
}
