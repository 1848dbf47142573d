/**
 * The toolchain manifest (`toolchain/versions.env`) for the TypeScript: the versions the toolkit builds or checks its
 * tools against, and the layout of the cache it keeps them in. `toolchain/manifest.sh` reads the same file for the
 * scripts; this reader is the strict one (unknown, repeated and missing keys are errors), so the test suite, which
 * loads it, refuses a manifest the scripts would misread.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The keys the manifest must define, each once. */
export const MANIFEST_KEYS = [
  "PULUMI_VERSION",
  "MIN_PULUMI_VERSION",
  "K8S_PLUGIN_VERSION",
  "K8S_PLUGIN_MODULE_VERSION",
  "K8S_PLUGIN_SDK_VERSION",
  "KUBE_VERSION",
  "MIN_GO_VERSION",
  "CACHE_FOLDER",
  "PULUMI_CACHE_FOLDER",
  "K8S_PLUGIN_CACHE_FOLDER",
  "KUBE_CACHE_FOLDER",
  "GVISOR_VERSION",
  "RUNSC_CACHE_FOLDER",
  "RUNSC_SHIM_CACHE_FOLDER",
  "CONTAINERD_VERSION",
  "CONTAINERD_CACHE_FOLDER",
  "KUBE_ROUTER_VERSION",
  "KUBE_ROUTER_CACHE_FOLDER",
  "KWOK_VERSION",
  "KWOK_CACHE_FOLDER",
  "MOBY_API_VERSION",
  "COMPOSE_GO_VERSION",
  "MOBY_DAEMON_VERSION",
  "MOBY_SECCOMP_VERSION",
  "KUBE_API_VERSION",
  "AGENT_SANDBOX_VERSION",
  "KUBERAY_VERSION",
  "KUBEFLOW_TRAINER_VERSION",
  "ARGO_WORKFLOWS_VERSION",
  "ARGO_ROLLOUTS_VERSION",
  "SPARK_OPERATOR_VERSION",
  "TEKTON_PIPELINE_VERSION",
  "KNATIVE_SERVING_VERSION",
  "KEDA_VERSION",
] as const;

/** One key of the manifest. */
type ManifestKey = (typeof MANIFEST_KEYS)[number];

/** The manifest's values by key. */
export type ToolchainManifest = Readonly<Record<ManifestKey, string>>;

/** Where the manifest is. */
const MANIFEST_PATH = join(__dirname, "versions.env");

/**
 * Parses the manifest's text: `KEY=VALUE` lines, comments (`#` first) and blank lines; a value has no spaces,
 * quotes or `$`. Throws on any other line, an unknown or repeated key, or a missing one.
 */
export function parseManifest(text: string, source = MANIFEST_PATH): ToolchainManifest {
  const known = new Set<string>(MANIFEST_KEYS);
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([A-Z][A-Z0-9_]*)=([^\s"'$]+)$/.exec(line);
    if (m === null) throw new Error(`${source}: not a KEY=VALUE line: ${line}`);
    const [, key = "", value = ""] = m;
    if (!known.has(key)) throw new Error(`${source}: unknown key ${key}`);
    if (values.has(key)) throw new Error(`${source}: ${key} is set twice`);
    values.set(key, value);
  }
  const absent = MANIFEST_KEYS.filter((k) => !values.has(k));
  if (absent.length > 0) throw new Error(`${source}: missing ${absent.join(", ")}`);
  return Object.fromEntries(values) as ToolchainManifest;
}

/** The toolchain manifest, read once. */
export const TOOLCHAIN: ToolchainManifest = parseManifest(readFileSync(MANIFEST_PATH, "utf8"));

/** The per-user cache where the toolkit keeps the tools it builds: `${XDG_CACHE_HOME:-~/.cache}/<CACHE_FOLDER>`. */
export function toolCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(base, TOOLCHAIN.CACHE_FOLDER);
}

/** A cached tool's binary: `<cache>/<tool folder>/v<version>/bin/<binary>`, the layout toolchain/setup.sh writes. */
export function cachedToolPath(
  folder: string,
  version: string,
  binary: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return join(toolCacheDir(env), folder, `v${version}`, "bin", binary);
}
