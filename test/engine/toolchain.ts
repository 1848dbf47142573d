// Where the engine tests find the toolchain that `toolchain/setup.sh` provides: the Pulumi CLI (PATH or cache), the
// kubernetes resource plugin, etcd, kube-apiserver and kube-controller-manager. A missing piece is an error that names
// it and the command that provides it: the engine tests never skip silently.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, resolve } from "node:path";
import { cachedToolPath, TOOLCHAIN, toolCacheDir } from "../../toolchain/manifest";
import { inspectToolchain, onPath } from "../../toolchain/pulumi";

/** The repository root. */
export const ROOT = resolve(__dirname, "..", "..");

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
    cachedToolPath(
      TOOLCHAIN.K8S_PLUGIN_CACHE_FOLDER,
      TOOLCHAIN.K8S_PLUGIN_VERSION,
      "pulumi-resource-kubernetes",
    ),
  );
  if (plugin === undefined)
    missing.push("the Pulumi kubernetes resource plugin (pulumi-resource-kubernetes)");
  const etcd = onPath("etcd");
  if (etcd === undefined) missing.push("etcd (Debian's etcd-server)");
  const apiserver = firstExisting(
    onPath("kube-apiserver"),
    cachedToolPath(TOOLCHAIN.KUBE_CACHE_FOLDER, TOOLCHAIN.KUBE_VERSION, "kube-apiserver"),
  );
  if (apiserver === undefined) missing.push(`kube-apiserver v${TOOLCHAIN.KUBE_VERSION}`);
  const kcm = firstExisting(
    onPath("kube-controller-manager"),
    cachedToolPath(TOOLCHAIN.KUBE_CACHE_FOLDER, TOOLCHAIN.KUBE_VERSION, "kube-controller-manager"),
  );
  if (kcm === undefined) missing.push(`kube-controller-manager v${TOOLCHAIN.KUBE_VERSION}`);
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

/** What a real node adds to the engine toolchain (toolchain/setup.sh kube node, and netpol for the enforcer). */
export interface NodeToolchain {
  readonly kubeScheduler: string;
  readonly kubelet: string;
  readonly kubeProxy: string;
  readonly containerd: string;
  /** The CNI plugins' folder. */
  readonly cniBinDir: string;
  /** The pod sandbox's process, compiled from k8s.io/kubernetes's pause.c. */
  readonly pause: string;
  /** gVisor for the node's containerd: `runsc` and `containerd-shim-runsc-v1` (the `runsc` handler). */
  readonly runsc: { readonly bin: string; readonly shim: string };
  /** The NetworkPolicy enforcer (kube-router's policy controller): its binary and arguments. */
  readonly netpol: { readonly bin: string; readonly args: (kubeconfig: string, node: string) => string[] };
}

/** Debian's CNI plugins' folder (containernetworking-plugins), else the CNI convention's. */
const CNI_DIRS = ["/usr/lib/cni", "/opt/cni/bin"];

/** Finds the node's tools, or throws one error naming what is missing and the command that provides it. */
export function requireNodeToolchain(): NodeToolchain {
  const missing: string[] = [];
  const kube = (binary: string) => {
    const found = firstExisting(cachedToolPath(TOOLCHAIN.KUBE_CACHE_FOLDER, TOOLCHAIN.KUBE_VERSION, binary));
    if (found === undefined) missing.push(`${binary} v${TOOLCHAIN.KUBE_VERSION} (toolchain/setup.sh kube)`);
    return found ?? "";
  };
  const kubeScheduler = kube("kube-scheduler");
  const kubelet = kube("kubelet");
  const kubeProxy = kube("kube-proxy");
  const pause = kube("pause");
  for (const tool of ["runc", "ctr", "iptables", "ipset", "ip"]) {
    if (onPath(tool) === undefined) missing.push(`${tool} (toolchain/setup.sh node)`);
  }
  const kubeRouter = firstExisting(
    cachedToolPath(TOOLCHAIN.KUBE_ROUTER_CACHE_FOLDER, TOOLCHAIN.KUBE_ROUTER_VERSION, "kube-router"),
  );
  if (kubeRouter === undefined)
    missing.push(
      `kube-router v${TOOLCHAIN.KUBE_ROUTER_VERSION}, the NetworkPolicy enforcer (toolchain/setup.sh netpol)`,
    );
  const gvisor = (binary: string) => {
    const found = firstExisting(
      cachedToolPath(TOOLCHAIN.RUNSC_CACHE_FOLDER, TOOLCHAIN.GVISOR_VERSION, binary),
    );
    if (found === undefined)
      missing.push(`${binary} (gVisor v${TOOLCHAIN.GVISOR_VERSION}: toolchain/setup.sh runsc)`);
    return found ?? "";
  };
  const nodeShim = firstExisting(
    cachedToolPath(TOOLCHAIN.RUNSC_SHIM_CACHE_FOLDER, TOOLCHAIN.GVISOR_VERSION, "containerd-shim-runsc-v1"),
  );
  if (nodeShim === undefined)
    missing.push(`containerd-shim-runsc-v1 (gVisor v${TOOLCHAIN.GVISOR_VERSION}: toolchain/setup.sh runsc)`);
  const runsc = { bin: gvisor("runsc"), shim: nodeShim ?? "" };
  // The node's containerd: the 1.7 line built from the module proxy (it reads gVisor's shim's answer), with its
  // runc shim beside it.
  const fromCache = (binary: string) =>
    firstExisting(cachedToolPath(TOOLCHAIN.CONTAINERD_CACHE_FOLDER, TOOLCHAIN.CONTAINERD_VERSION, binary));
  const containerd = fromCache("containerd") ?? "";
  if (containerd === "" || fromCache("containerd-shim-runc-v2") === undefined)
    missing.push(`containerd v${TOOLCHAIN.CONTAINERD_VERSION} and its runc shim (toolchain/setup.sh runsc)`);
  const cniBinDir = CNI_DIRS.find((d) => existsSync(`${d}/bridge`)) ?? "";
  if (cniBinDir === "")
    missing.push("the CNI plugins (Debian's containernetworking-plugins: toolchain/setup.sh node)");
  if (missing.length > 0) {
    throw new Error(
      [
        "the node tests need a local Kubernetes node's tools, and these are missing:",
        ...missing.map((m) => `  - ${m}`),
        `Run \`toolchain/setup.sh\` (as root on Debian), then run the tests again.`,
      ].join("\n"),
    );
  }
  return {
    kubeScheduler,
    kubelet,
    kubeProxy,
    containerd,
    cniBinDir,
    pause,
    runsc,
    netpol: {
      bin: kubeRouter ?? "",
      // Only the policy controller: no service proxy (kube-proxy is the node's), no BGP router, no health listener.
      args: (kubeconfig, node) => [
        `--kubeconfig=${kubeconfig}`,
        `--hostname-override=${node}`,
        "--run-firewall=true",
        "--run-router=false",
        "--run-service-proxy=false",
        "--service-cluster-ip-range=10.96.0.0/16",
        "--health-port=0",
        "--v=1",
      ],
    },
  };
}

/** The simulated nodes' tools: kwok and the scheduler. */
export interface KwokToolchain {
  readonly kwok: string;
  readonly kubeScheduler: string;
}

/**
 * Finds kwok and kube-scheduler; builds kwok with the project's own set-up when it is missing (`setup.sh kwok`, which
 * waits for a build another run has started), or throws one error naming what is missing and how to get it.
 */
export async function requireKwokToolchain(): Promise<KwokToolchain> {
  const cached = () =>
    firstExisting(cachedToolPath(TOOLCHAIN.KWOK_CACHE_FOLDER, TOOLCHAIN.KWOK_VERSION, "kwok"));
  if (cached() === undefined) {
    const setUp = spawn("bash", [resolve(ROOT, "toolchain", "setup.sh"), "kwok"], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    await new Promise((done) => setUp.on("exit", done));
  }
  const kwok = cached();
  const kubeScheduler = firstExisting(
    cachedToolPath(TOOLCHAIN.KUBE_CACHE_FOLDER, TOOLCHAIN.KUBE_VERSION, "kube-scheduler"),
  );
  const missing = [
    ...(kwok === undefined ? [`kwok v${TOOLCHAIN.KWOK_VERSION} (bash toolchain/setup.sh kwok)`] : []),
    ...(kubeScheduler === undefined
      ? [`kube-scheduler v${TOOLCHAIN.KUBE_VERSION} (bash toolchain/setup.sh kube)`]
      : []),
  ];
  if (kwok === undefined || kubeScheduler === undefined)
    throw new Error(`the simulated nodes need what is missing: ${missing.join("; ")}`);
  return { kwok, kubeScheduler };
}
