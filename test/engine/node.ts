// A real Kubernetes node for the engine tests, beside the control plane of test/engine/cluster.ts: containerd 1.7
// built from the module proxy (its CRI plugin) with Debian's runc and gVisor's shim as the `runsc` handler, pod networking from the CNI plugins (bridge, host-local, firewall,
// portmap), kubelet and kube-proxy built from k8s.io/kubernetes (toolchain/setup.sh kube), and kube-router's
// network policy controller as the NetworkPolicy enforcer (toolchain/setup.sh netpol). No image is pulled: the offline images the Docker side
// builds (and the pause image made from the pause binary the set-up compiles) are loaded into the node's containerd.
//
// One node per machine at a time (the kubelet's cgroups, the bridge and kube-proxy's rules are the machine's): a lock
// folder serialises them. Everything the node writes is under the cluster's temporary folder, except what the kernel
// holds (the bridge, iptables chains, cgroups, network namespaces), which stop() removes.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import type { KubeResponse } from "./cluster";
import { freePort, type Proc, sleep, startProcess, stopProcess } from "./processes";
import type { NodeToolchain } from "./toolchain";

/** The node's name in the cluster. */
export const NODE_NAME = "sandbox-node";
/** The cluster's pod range; the node's own /24 is its first (the controller manager allocates it). */
export const POD_CIDR = "10.244.0.0/16";
const NODE_POD_SUBNET = "10.244.0.0/24";
/** The Linux bridge the pods' veth pairs join. */
const BRIDGE = "sbx0";
/** The pod sandbox image, made from the compiled pause binary. */
export const PAUSE_IMAGE = "sandbox-pause:1";
const LOCK = "/tmp/sandbox-engine-node.lock";

export interface NodeOptions {
  /** The node's binaries (requireNodeToolchain()). */
  readonly tools: NodeToolchain;
  /** The kubelet's `podPidsLimit`: the process wall of every pod on the node. */
  readonly podPidsLimit: number;
  /** Images to load from the local Docker engine into the node (`docker save | ctr import`). */
  readonly images: readonly string[];
}

export interface RunningNode {
  readonly name: string;
  /** The node's InternalIP (the machine's own address; the kubelet listens there). */
  readonly ip: string;
  readonly podPidsLimit: number;
  /** Stops the node and removes what it left in the kernel. */
  stop(): Promise<void>;
}

/** What the node needs from the control plane. */
export interface NodeContext {
  readonly dir: string;
  readonly procs: Proc[];
  readonly api: (method: string, path: string, body?: unknown) => Promise<KubeResponse>;
  readonly waitFor: (what: string, check: () => Promise<boolean>, timeoutMs?: number) => Promise<void>;
  /** kubeconfig files: the admin's, the kubelet's (system:node:<name>) and kube-proxy's. */
  readonly admin: string;
  readonly kubelet: string;
  readonly proxy: string;
  /** The CA the API server's client certificate for the kubelet is signed by. */
  readonly clientCa: string;
}

function sh(cmd: string, args: string[], input?: string): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8", input, maxBuffer: 64 * 1024 * 1024 });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

/**
 * The machine's own address and the interface of its route off the machine (a route lookup only; nothing is sent).
 */
function nodeAddress(): { ip: string; dev: string } {
  const r = sh("ip", ["-j", "-4", "route", "get", "203.0.113.1"]);
  try {
    const routes = JSON.parse(r.out) as { prefsrc?: string; dev?: string }[];
    const ip = routes[0]?.prefsrc;
    const dev = routes[0]?.dev;
    if (ip && dev) return { ip, dev };
  } catch {}
  throw new Error(`the node needs a non-loopback IPv4 address (ip route get: ${r.out.trim()})`);
}

/**
 * The tests' own wall, under every policy: no pod packet leaves the machine (dropped on its way to the interface of
 * the route off it), whatever the NetworkPolicy enforcer does. What the policies must block inside the machine
 * (another pod, a server on the host) is theirs to block.
 */
/** Pod packets that no policy rule accepted (see startNode): dropped, not passed on. */
function failClosedRules(): string[][] {
  return ["INPUT", "FORWARD"].map((chain) => [
    chain,
    "-s",
    POD_CIDR,
    "-m",
    "conntrack",
    "--ctstate",
    "NEW",
    "-m",
    "comment",
    "--comment",
    "sandbox-engine-node fail closed",
    "-j",
    "DROP",
  ]);
}

const iptables = (op: string, rule: string[]) => [...rule.slice(0, 2), op, ...rule.slice(2)];
function offMachineRules(dev: string): string[][] {
  // In the mangle table: seen before any filter rule the enforcer or kube-proxy may put first and accept by.
  return [
    [
      "-t",
      "mangle",
      "FORWARD",
      "-s",
      POD_CIDR,
      "-o",
      dev,
      "-m",
      "comment",
      "--comment",
      "sandbox-engine-node",
      "-j",
      "DROP",
    ],
  ];
}

async function lock(): Promise<() => void> {
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, "pid"), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      let holder = Number.NaN;
      try {
        holder = Number(readFileSync(join(LOCK, "pid"), "utf8"));
      } catch {}
      let alive = false;
      if (Number.isInteger(holder) && holder > 0) {
        try {
          process.kill(holder, 0);
          alive = true;
        } catch {}
      }
      if (!alive) {
        rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`another test's node (pid ${holder}) held ${LOCK} for 15 minutes`);
      await sleep(1000);
    }
  }
}

/** Mount points at or under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "")
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** Removes cgroup folders the kubelet made (children first); busy ones are left to the kernel. */
function removeCgroups(): void {
  const controllers = existsSync("/sys/fs/cgroup/cgroup.controllers")
    ? [""]
    : readdirSync("/sys/fs/cgroup").filter((c) => !c.includes(","));
  const remove = (path: string) => {
    let entries: string[] = [];
    try {
      entries = readdirSync(path, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return;
    }
    for (const e of entries) remove(join(path, e));
    try {
      rmSync(path, { recursive: false });
    } catch {
      spawnSync("rmdir", [path]);
    }
  };
  for (const c of controllers) remove(join("/sys/fs/cgroup", c, "kubepods"));
}

/** The offline pause image, made from the compiled pause binary when the engine lacks it. */
function ensurePauseImage(pause: string, dir: string): void {
  if (sh("docker", ["image", "inspect", PAUSE_IMAGE]).ok) return;
  const ctx = join(dir, "pause-image");
  mkdirSync(ctx, { recursive: true });
  writeFileSync(join(ctx, "pause"), readFileSync(pause), { mode: 0o755 });
  const tar = sh("tar", ["-C", ctx, "-cf", join(dir, "pause.tar"), "pause"]);
  if (!tar.ok) throw new Error(`tar of the pause image: ${tar.out}`);
  const r = sh("docker", [
    "import",
    "--change",
    'ENTRYPOINT ["/pause"]',
    join(dir, "pause.tar"),
    PAUSE_IMAGE,
  ]);
  if (!r.ok) throw new Error(`docker import ${PAUSE_IMAGE}: ${r.out}`);
}

/** Starts containerd, kubelet, kube-proxy (and the enforcer); resolves once the node is Ready and untainted. */
export async function startNode(ctx: NodeContext, options: NodeOptions): Promise<RunningNode> {
  const tools = options.tools;
  const unlock = await lock();
  const dir = join(ctx.dir, "node");
  mkdirSync(dir, { recursive: true });
  const { ip, dev } = nodeAddress();
  const own: Proc[] = [];
  const track = (p: Proc) => {
    own.push(p);
    ctx.procs.push(p);
    return p;
  };
  const socket = join(dir, "containerd", "containerd.sock");
  const ctr = (args: string[], input?: string) => sh("ctr", ["-a", socket, "-n", "k8s.io", ...args], input);

  // What a node that died with its test left in the kernel.
  for (const rule of offMachineRules(dev)) while (sh("iptables", iptables("-D", rule)).ok);
  for (const rule of failClosedRules()) while (sh("iptables", ["-D", ...rule]).ok);
  sh("ip", ["link", "del", BRIDGE]);
  sh(tools.kubeProxy, ["--cleanup"]);
  sh(tools.netpol.bin, ["--cleanup-config"]);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      // Every pod off the node while the kubelet still runs: it tears down their networks and volumes.
      const pods = await ctx.api("GET", "/api/v1/pods").catch(() => undefined);
      for (const p of pods?.body?.items ?? []) {
        await ctx
          .api(
            "DELETE",
            `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}?gracePeriodSeconds=0`,
          )
          .catch(() => undefined);
      }
      const started = Date.now();
      while (Date.now() - started < 30_000) {
        const left = ctr(["tasks", "ls", "-q"]).out.trim();
        if (left === "") break;
        await sleep(500);
      }
    } catch {}
    for (const p of [...own].reverse()) await stopProcess(p, 5_000);
    // Whatever is still running in the node's containerd goes with it.
    for (const id of ctr(["tasks", "ls", "-q"]).out.split("\n").filter(Boolean))
      ctr(["tasks", "kill", "-s", "SIGKILL", id]);
    for (const shim of ["containerd-shim-runc-v2", "containerd-shim-runsc-v1"])
      sh("pkill", ["-KILL", "-f", `${shim} -namespace k8s.io -address ${socket}`]);
    // gVisor's sandboxes and gofers name their root on their command line.
    sh("pkill", ["-KILL", "-f", `--root=${join(dir, "runsc")}`]);
    for (const m of mountsUnder(dir)) sh("umount", ["-l", m]);
    for (const f of existsSync("/run/netns") ? readdirSync("/run/netns") : []) {
      if (f.startsWith("cni-") && netnsBefore !== undefined && !netnsBefore.has(f)) {
        sh("umount", [`/run/netns/${f}`]);
        rmSync(`/run/netns/${f}`, { force: true });
      }
    }
    sh("ip", ["link", "del", BRIDGE]);
    sh(tools.kubeProxy, ["--cleanup"]);
    sh(tools.netpol.bin, ["--cleanup-config"]);
    for (const rule of offMachineRules(dev)) while (sh("iptables", iptables("-D", rule)).ok);
    for (const rule of failClosedRules()) while (sh("iptables", ["-D", ...rule]).ok);
    removeCgroups();
    unlock();
  };
  const netnsBefore = new Set(existsSync("/run/netns") ? readdirSync("/run/netns") : []);

  try {
    for (const rule of offMachineRules(dev)) {
      const r = sh("iptables", iptables("-I", rule));
      if (!r.ok) throw new Error(`iptables -I ${rule.join(" ")}: ${r.out}`);
    }
    // containerd: its own root, state and socket (the Docker engine's containerd is left alone).
    const cni = join(dir, "cni");
    mkdirSync(cni, { recursive: true });
    writeFileSync(
      join(dir, "containerd.toml"),
      [
        "version = 2",
        `root = "${join(dir, "containerd", "root")}"`,
        `state = "${join(dir, "containerd", "state")}"`,
        "[grpc]",
        `  address = "${socket}"`,
        '[plugins."io.containerd.grpc.v1.cri"]',
        `  sandbox_image = "${PAUSE_IMAGE}"`,
        // The kubelet asks for negative OOM scores (-997, -998) that this machine's kernel refuses to a container:
        // bounded by containerd's own score instead.
        "  restrict_oom_score_adj = true",
        '  [plugins."io.containerd.grpc.v1.cri".cni]',
        `    bin_dir = "${tools.cniBinDir}"`,
        `    conf_dir = "${cni}"`,
        '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '    runtime_type = "io.containerd.runc.v2"',
        '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        `    Root = "${join(dir, "runc")}"`,
        // gVisor: the `runsc` handler of the `gvisor` RuntimeClass. containerd finds the shim on its PATH; the
        // shim runs this runsc with its own root (toml keys of gVisor's shim runsc options).
        '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]',
        '    runtime_type = "io.containerd.runsc.v1"',
        '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]',
        '    TypeUrl = "io.containerd.runsc.v1.options"',
        `    ConfigPath = "${join(dir, "runsc.toml")}"`,
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "runsc.toml"),
      [
        `binary_name = "${tools.runsc.bin}"`,
        `root = "${join(dir, "runsc")}"`,
        `log_path = "${join(dir, "runsc-logs")}/%ID%/shim.log"`,
        'log_level = "info"',
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(cni, "10-sandbox-pods.conflist"),
      JSON.stringify({
        cniVersion: "0.4.0",
        name: "sandbox-pods",
        plugins: [
          {
            type: "bridge",
            bridge: BRIDGE,
            isGateway: true,
            // Pods reach the machine and each other only: nothing is masqueraded off the machine.
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: "host-local",
              ranges: [[{ subnet: NODE_POD_SUBNET }]],
              routes: [{ dst: "0.0.0.0/0" }],
              dataDir: join(dir, "cni-ipam"),
            },
          },
          // Docker's FORWARD policy is DROP: the firewall plugin lets the pods' own traffic through.
          { type: "firewall" },
          { type: "portmap", capabilities: { portMappings: true } },
        ],
      }),
    );
    track(
      startProcess("containerd", tools.containerd, ["--config", join(dir, "containerd.toml")], dir, {
        ...process.env,
        // Its shims: runc's beside it, gVisor's from the node's build.
        PATH: [dirname(tools.containerd), dirname(tools.runsc.shim), process.env.PATH ?? ""].join(delimiter),
      }),
    );
    await ctx.waitFor("containerd to answer", async () => ctr(["version"]).ok, 30_000);

    // The images, from the local Docker engine (nothing is pulled).
    ensurePauseImage(tools.pause, dir);
    const images = [PAUSE_IMAGE, ...options.images];
    const load = sh("bash", [
      "-c",
      `set -o pipefail; docker save ${images.map((i) => `'${i}'`).join(" ")} | ctr -a '${socket}' -n k8s.io images import -`,
    ]);
    if (!load.ok) throw new Error(`loading ${images.join(", ")} into the node: ${load.out}`);

    writeFileSync(
      join(dir, "kubelet.json"),
      JSON.stringify({
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        address: ip,
        port: 10250,
        readOnlyPort: 0,
        healthzPort: 0,
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true },
          x509: { clientCAFile: ctx.clientCa },
        },
        authorization: { mode: "Webhook" },
        // The machine's cgroup layout (v1 here): the kubelet refuses v1 unless told, and uses cgroupfs like Docker.
        cgroupDriver: "cgroupfs",
        failCgroupV1: false,
        failSwapOn: false,
        // Every container gets the runtime's seccomp profile unless its pod asks otherwise; the process wall.
        seccompDefault: true,
        podPidsLimit: options.podPidsLimit,
        containerRuntimeEndpoint: `unix://${socket}`,
        imageServiceEndpoint: `unix://${socket}`,
        podLogsDir: join(dir, "pod-logs"),
        // A test node on a shared disk: evict only when it is nearly full, never collect the offline images.
        evictionHard: {
          "memory.available": "100Mi",
          "nodefs.available": "1%",
          "imagefs.available": "1%",
          "nodefs.inodesFree": "1%",
        },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        maxPods: 32,
        resolvConf: "/etc/resolv.conf",
        enforceNodeAllocatable: ["pods"],
      }),
    );
    track(
      startProcess(
        "kubelet",
        tools.kubelet,
        [
          `--config=${join(dir, "kubelet.json")}`,
          `--kubeconfig=${ctx.kubelet}`,
          `--hostname-override=${NODE_NAME}`,
          `--node-ip=${ip}`,
          `--root-dir=${join(dir, "kubelet")}`,
          `--cert-dir=${join(dir, "kubelet-pki")}`,
          "--v=1",
        ],
        dir,
      ),
    );

    writeFileSync(
      join(dir, "kube-proxy.json"),
      JSON.stringify({
        apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
        kind: "KubeProxyConfiguration",
        clientConnection: { kubeconfig: ctx.proxy },
        mode: "iptables",
        clusterCIDR: POD_CIDR,
        hostnameOverride: NODE_NAME,
        metricsBindAddress: `127.0.0.1:${await freePort()}`,
        healthzBindAddress: "",
        nodePortAddresses: ["primary"],
        conntrack: { maxPerCore: 0 },
      }),
    );
    track(
      startProcess("kube-proxy", tools.kubeProxy, [`--config=${join(dir, "kube-proxy.json")}`, "--v=1"], dir),
    );

    await ctx.waitFor(
      `node ${NODE_NAME} to be Ready and schedulable`,
      async () => {
        const n = await ctx.api("GET", `/api/v1/nodes/${NODE_NAME}`);
        const ready = (n.body?.status?.conditions ?? []).some(
          (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
        );
        return n.status === 200 && ready && (n.body?.spec?.taints ?? []).length === 0;
      },
      120_000,
    );
    // The enforcer looks its node up at start: after the kubelet registered it. Ready once its chains are in.
    track(startProcess("kube-router", tools.netpol.bin, tools.netpol.args(ctx.admin, NODE_NAME), dir));
    // Its jump is normally first; the Docker engine puts its own DOCKER-USER jump first whenever it makes a
    // network, so the jump is looked for anywhere, and the node's fail-closed rule goes right after it.
    const jumpAt = (chain: string) =>
      sh("iptables", ["-S", chain])
        .out.split("\n")
        .findIndex((l) => /^-A \S+ .*-j KUBE-ROUTER-/.test(l));
    await ctx.waitFor(
      "kube-router to install its NetworkPolicy chains",
      async () => {
        if (["INPUT", "FORWARD"].every((c) => jumpAt(c) >= 1)) return true;
        const heads = ["INPUT", "FORWARD"].map((c) =>
          sh("iptables", ["-S", c]).out.split("\n").slice(0, 5).join(" | "),
        );
        throw new Error(`no KUBE-ROUTER jump yet in: ${heads.join(" ;; ")}`);
      },
      90_000,
    );
    // The enforcer programs a new pod's rules a moment after the pod starts, and until then lets its traffic fall
    // through to the chains after its own: the node fails closed instead. Its jump accepts what a policy allows; a
    // new connection from a pod that gets past it is dropped, right after it (line i of `iptables -S` is rule i).
    for (const rule of failClosedRules()) {
      const chain = rule[0] ?? "";
      const r = sh("iptables", ["-I", chain, String(jumpAt(chain) + 1), ...rule.slice(1)]);
      if (!r.ok) throw new Error(`iptables -I ${rule.join(" ")}: ${r.out}`);
    }
    return { name: NODE_NAME, ip, podPidsLimit: options.podPidsLimit, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
