import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { cachedToolPath, TOOLCHAIN } from "./manifest";

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
 * The toolkit's own Docker provider (`providers/docker`), served as `pulumi-resource-docker` when the official plugin
 * is not installed. `SANDBOX_DOCKER_PROVIDER=official` refuses the fallback; `=local` uses it even when the official
 * plugin is there.
 */
function localDockerProvider(root: string): string {
  return join(root, "providers", "docker", "pulumi-resource-docker");
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
}

/** The Pulumi home the toolkit uses: `PULUMI_HOME` when set, else a project-owned folder. */
export function pulumiHome(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.PULUMI_HOME && env.PULUMI_HOME !== "" ? env.PULUMI_HOME : join(root, ".sandbox", "pulumi-home");
}

function versionOf(path: string): string | undefined {
  const r = spawnSync(path, ["version"], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) return undefined;
  return r.stdout.trim().replace(/^v/, "");
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

/** Looks for the Pulumi CLI (PATH, then the toolkit's cache) and the resource plugins `packages` need. */
export function inspectToolchain(
  root: string,
  packages: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ToolchainReport {
  const missing: string[] = [];
  const cached = cachedPulumiPath(env);
  let pulumi: ToolchainReport["pulumi"];
  for (const path of [onPath("pulumi", env), existsSync(cached) ? cached : undefined]) {
    if (path === undefined) continue;
    const version = versionOf(path);
    if (version !== undefined && compareVersions(version, TOOLCHAIN.MIN_PULUMI_VERSION) >= 0) {
      pulumi = { path, version };
      break;
    }
    missing.push(
      `the Pulumi CLI at ${path} is ${version === undefined ? "not runnable" : `v${version}`}; the toolkit needs v${TOOLCHAIN.MIN_PULUMI_VERSION} or later`,
    );
  }
  if (pulumi === undefined) {
    missing.push(`the Pulumi CLI: no \`pulumi\` on PATH and none cached at ${cached}`);
  }
  const home = pulumiHome(root, env);
  const plugins: Record<string, string | undefined> = {};
  const pathPrepend: string[] = [];
  for (const pkg of packages) {
    const choice = env.SANDBOX_DOCKER_PROVIDER;
    plugins[pkg] = pkg === "docker" && choice === "local" ? undefined : findResourcePlugin(pkg, home, env);
    if (pkg === "docker" && plugins[pkg] === undefined && choice !== "official") {
      const local = localDockerProvider(root);
      if (existsSync(local)) {
        plugins[pkg] = local;
        pathPrepend.push(join(root, "providers", "docker"));
      }
    }
    if (plugins[pkg] === undefined) {
      missing.push(
        `the Pulumi ${pkg} resource plugin: no \`pulumi-resource-${pkg}\` on PATH and none installed under ${join(home, "plugins")}`,
      );
    }
  }
  return pulumi === undefined ? { plugins, pathPrepend, missing } : { pulumi, plugins, pathPrepend, missing };
}

/** The message the front prints when the engine cannot run: what is missing and how to get it. */
export function missingToolchainMessage(verb: string, stack: string, report: ToolchainReport): string {
  return [
    `cannot ${verb} stack "${stack}": the Pulumi engine is not available on this machine.`,
    ...report.missing.map((m) => `  missing: ${m}`),
    "How to get it:",
    "  - with internet access: install the Pulumi CLI (https://www.pulumi.com/docs/install/), then",
    "    `pulumi plugin install resource docker` (and `kubernetes` for Kubernetes projects);",
    "  - without downloads: `bash toolchain/setup.sh` builds the CLI and the Kubernetes plugin from the Go module",
    `    proxy and caches them (it needs Go ${TOOLCHAIN.MIN_GO_VERSION} or later); the toolkit's own Docker provider needs nothing;`,
    "  - point PULUMI_HOME at a Pulumi home that already holds the plugins, or put `pulumi-resource-<pkg>` on PATH.",
    "Nothing was deployed.",
  ].join("\n");
}
