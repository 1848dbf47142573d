// Where the engine tests find the toolchain that `toolchain/setup.sh` provides: the Pulumi CLI (PATH or cache), the
// kubernetes resource plugin, etcd, kube-apiserver and kube-controller-manager. A missing piece is an error that names
// it and the command that provides it: the engine tests never skip silently.
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { inspectToolchain, onPath, toolCacheDir } from "../../toolchain/pulumi";

/** The repository root. */
export const ROOT = resolve(__dirname, "..", "..");

// Keep these in step with toolchain/setup.sh.
export const K8S_PLUGIN_VERSION = "4.25.0";
export const KUBE_VERSION = "1.36.3";

export interface EngineToolchain {
  readonly pulumi: string;
  readonly pulumiVersion: string;
  readonly kubernetesPlugin: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  /** PATH for the engine: the plugin's folder first, so `pulumi-resource-kubernetes` is found without a download. */
  readonly path: string;
}

/** `<cache>/<tool>/v<version>/bin/<binary>`, the layout toolchain/setup.sh writes. */
export function cachedToolPath(tool: string, version: string, binary: string): string {
  return join(toolCacheDir(), tool, `v${version}`, "bin", binary);
}

function firstExisting(...candidates: (string | undefined)[]): string | undefined {
  return candidates.find((c) => c !== undefined && existsSync(c));
}

/** Finds every tool the engine tests need, or throws one error that lists what is missing and how to get it. */
export function requireEngineToolchain(): EngineToolchain {
  const missing: string[] = [];
  const report = inspectToolchain(ROOT, []);
  if (report.pulumi === undefined) missing.push(...report.missing);
  const plugin = firstExisting(
    onPath("pulumi-resource-kubernetes"),
    cachedToolPath("pulumi-resource-kubernetes", K8S_PLUGIN_VERSION, "pulumi-resource-kubernetes"),
  );
  if (plugin === undefined)
    missing.push("the Pulumi kubernetes resource plugin (pulumi-resource-kubernetes)");
  const etcd = onPath("etcd");
  if (etcd === undefined) missing.push("etcd (Debian's etcd-server)");
  const apiserver = firstExisting(
    onPath("kube-apiserver"),
    cachedToolPath("kubernetes", KUBE_VERSION, "kube-apiserver"),
  );
  if (apiserver === undefined) missing.push(`kube-apiserver v${KUBE_VERSION}`);
  const kcm = firstExisting(
    onPath("kube-controller-manager"),
    cachedToolPath("kubernetes", KUBE_VERSION, "kube-controller-manager"),
  );
  if (kcm === undefined) missing.push(`kube-controller-manager v${KUBE_VERSION}`);
  if (
    missing.length > 0 ||
    report.pulumi === undefined ||
    plugin === undefined ||
    etcd === undefined ||
    apiserver === undefined ||
    kcm === undefined
  ) {
    throw new Error(
      [
        "the engine tests need the Pulumi engine and a local Kubernetes control plane, and these are missing:",
        ...missing.map((m) => `  - ${m}`),
        "Run `toolchain/setup.sh` (it builds them from the Go module proxy and caches them under",
        `${toolCacheDir()}), then run the tests again.`,
      ].join("\n"),
    );
  }
  return {
    pulumi: report.pulumi.path,
    pulumiVersion: report.pulumi.version,
    kubernetesPlugin: plugin,
    etcd,
    kubeApiserver: apiserver,
    kubeControllerManager: kcm,
    path: [dirname(plugin), process.env.PATH ?? ""].join(delimiter),
  };
}
