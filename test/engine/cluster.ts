// A throwaway Kubernetes control plane for the engine tests: etcd, kube-apiserver and kube-controller-manager on free
// loopback ports, every file in a temporary folder. Without a node, pods are admitted or rejected and stay Pending;
// with `node: {...}` a scheduler and a real node (test/engine/node.ts: containerd, kubelet, kube-proxy, the
// NetworkPolicy enforcer) run them. The API server runs RBAC (and the Node authorizer), static tokens, a
// service-account key pair, and the admission plugins the sandbox relies on: PodSecurity, ResourceQuota,
// LimitRanger, NamespaceLifecycle, ServiceAccount (and NodeRestriction).
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SimulatedNodes, type SimulatedNodesOptions, startSimulatedNodes } from "./kwok";
import { NODE_NAME, type NodeOptions, POD_CIDR, type RunningNode, startNode } from "./node";
import { freePort, type Proc, sleep, startProcess, stopProcess, tail } from "./processes";
import type { EngineToolchain } from "./toolchain";

/** One answer of the API server. */
export interface KubeResponse {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a Kubernetes object or Status, read by the tests field by field
  readonly body: any;
  readonly text: string;
}

export interface Cluster {
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** The admin's bearer token (group system:masters). */
  readonly token: string;
  /** The API server's certificate chain (self-signed CA included), PEM. */
  readonly ca: string;
  /** A kubeconfig (JSON, which is YAML) for the admin: for `new kubernetes.Provider({ kubeconfig })`. */
  readonly kubeconfig: string;
  /** The temporary folder holding the data, keys and logs. */
  readonly dir: string;
  /** Calls the API server as the admin. */
  api(method: string, path: string, body?: unknown): Promise<KubeResponse>;
  /** Polls `check` until it returns true, or throws after `timeoutMs` with `what` in the message. */
  waitFor(what: string, check: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
  /** Stops every process and removes the temporary folder. */
  stop(): Promise<void>;
  /** The node, when one was asked for. */
  readonly node?: RunningNode;
  /** The simulated nodes, when they were asked for. */
  readonly simulated?: SimulatedNodes;
}

export interface ClusterOptions {
  /** Runs a scheduler and a real node beside the control plane. */
  readonly node?: NodeOptions;
  /**
   * Runs a scheduler and kwok beside the control plane, with `nodes` simulated nodes whose pods live without
   * containers (test/engine/kwok.ts). Not with `node`.
   */
  readonly simulated?: SimulatedNodesOptions;
}

/** The controllers every cluster runs: without them no service account, quota status or namespace deletion. */
const CONTROLLERS = [
  "namespace-controller",
  "serviceaccount-controller",
  "serviceaccount-token-controller",
  "resourcequota-controller",
  "job-controller",
  "garbage-collector-controller",
  "ttl-after-finished-controller",
];

/**
 * The controllers a cluster with a node adds: Deployments (the egress proxy), Service endpoints (kube-proxy routes
 * by EndpointSlices), the node's lifecycle (it lifts the not-ready taint) and pod CIDR, and the pod collector.
 */
const NODE_CONTROLLERS = [
  "deployment-controller",
  "replicaset-controller",
  "endpointslice-controller",
  // Pulumi's await of a Service reads its (v1) Endpoints.
  "endpoints-controller",
  "node-lifecycle-controller",
  "node-ipam-controller",
  "pod-garbage-collector-controller",
];

/** The controllers a cluster of simulated nodes adds: the nodes' lifecycle (it lifts the not-ready taint). */
const SIMULATED_CONTROLLERS = ["node-lifecycle-controller", "pod-garbage-collector-controller"];

/** A kubeconfig (JSON) for one identity of the cluster. */
function kubeconfigFor(server: string, ca: string, user: string, token: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "sandbox-test",
        cluster: { server, "certificate-authority-data": Buffer.from(ca).toString("base64") },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: "sandbox-test", context: { cluster: "sandbox-test", user } }],
    "current-context": "sandbox-test",
  });
}

/**
 * The client certificate the API server presents to the kubelet (logs, exec): a throwaway CA and a certificate
 * of `system:masters` signed by it, made with openssl. The kubelet trusts that CA for its clients.
 */
function kubeletClientCertificate(dir: string): { ca: string; cert: string; key: string } {
  const f = (n: string) => join(dir, n);
  const run = (args: string[]) => {
    const r = spawnSync("openssl", args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr || r.error}`);
  };
  run([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    f("client-ca.key"),
    "-out",
    f("client-ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=sandbox-test-client-ca",
  ]);
  run([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    f("kubelet-client.key"),
    "-out",
    f("kubelet-client.csr"),
    "-subj",
    "/O=system:masters/CN=kube-apiserver-kubelet-client",
  ]);
  run([
    "x509",
    "-req",
    "-in",
    f("kubelet-client.csr"),
    "-CA",
    f("client-ca.crt"),
    "-CAkey",
    f("client-ca.key"),
    "-CAcreateserial",
    "-out",
    f("kubelet-client.crt"),
    "-days",
    "2",
  ]);
  return { ca: f("client-ca.crt"), cert: f("kubelet-client.crt"), key: f("kubelet-client.key") };
}

/** Starts etcd, kube-apiserver and kube-controller-manager; resolves once the `default` service account exists. */
export async function startCluster(tools: EngineToolchain, options: ClusterOptions = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-engine-kube-"));
  const procs: Proc[] = [];
  // If the test process dies, its control plane dies with it.
  const onExit = () => {
    for (const p of procs) if (p.exited === undefined) p.child.kill("SIGKILL");
  };
  process.once("exit", onExit);
  let node: RunningNode | undefined;
  const stop = async () => {
    // The node first (its pods and host state), while the API server still answers.
    await node?.stop();
    for (const p of [...procs].reverse()) await stopProcess(p);
    process.removeListener("exit", onExit);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcd = `http://127.0.0.1:${etcdClient}`;
    procs.push(
      startProcess(
        "etcd",
        tools.etcd,
        [
          "--name=sandbox-test",
          `--data-dir=${join(dir, "etcd")}`,
          `--listen-client-urls=${etcd}`,
          `--advertise-client-urls=${etcd}`,
          `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-cluster=sandbox-test=http://127.0.0.1:${etcdPeer}`,
          "--log-level=warn",
        ],
        dir,
      ),
    );

    // A static admin token, and the service-account key pair the API server signs tokens with.
    const token = randomBytes(24).toString("hex");
    // The node's own identities: the kubelet (Node authorizer), kube-proxy and the scheduler (their RBAC roles).
    const identities = {
      kubelet: {
        user: `system:node:${NODE_NAME}`,
        groups: "system:nodes",
        token: randomBytes(24).toString("hex"),
      },
      proxy: { user: "system:kube-proxy", groups: "", token: randomBytes(24).toString("hex") },
      scheduler: { user: "system:kube-scheduler", groups: "", token: randomBytes(24).toString("hex") },
    };
    const tokenLines = [
      `${token},sandbox-admin,sandbox-admin,"system:masters"`,
      ...Object.values(identities).map(
        (i) => `${i.token},${i.user},${i.user}${i.groups ? `,"${i.groups}"` : ""}`,
      ),
    ];
    writeFileSync(join(dir, "tokens.csv"), `${tokenLines.join("\n")}\n`, { mode: 0o600 });
    const client = options.node === undefined ? undefined : kubeletClientCertificate(dir);
    const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    writeFileSync(join(dir, "sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }), {
      mode: 0o600,
    });
    writeFileSync(join(dir, "sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }));

    const server = `https://127.0.0.1:${apiPort}`;
    let ca = "";
    const api = (method: string, path: string, body?: unknown): Promise<KubeResponse> =>
      new Promise((resolveRes, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = request(
          `${server}${path}`,
          {
            method,
            ca: ca === "" ? undefined : ca,
            rejectUnauthorized: ca !== "",
            headers: {
              authorization: `Bearer ${token}`,
              accept: "application/json",
              ...(payload === undefined
                ? {}
                : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
            },
            timeout: 30_000,
          },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => {
              text += c;
            });
            res.on("end", () => {
              let parsed: unknown;
              try {
                parsed = JSON.parse(text);
              } catch {
                parsed = undefined;
              }
              resolveRes({ status: res.statusCode ?? 0, body: parsed, text });
            });
          },
        );
        req.on("error", reject);
        req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)));
        if (payload !== undefined) req.write(payload);
        req.end();
      });

    const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      let last: unknown;
      while (Date.now() < deadline) {
        for (const p of procs) {
          if (p.exited !== undefined) {
            throw new Error(`${p.name} exited (${p.exited}) while waiting for ${what}:\n${tail(p.log)}`);
          }
        }
        try {
          if (await check()) return;
        } catch (e) {
          last = e;
        }
        await sleep(250);
      }
      const logs = procs.map((p) => `--- ${p.name} (${p.log})\n${tail(p.log, 15)}`).join("\n");
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${last})` : ""}\n${logs}`,
      );
    };

    await waitFor("etcd to be healthy", async () => (await fetch(`${etcd}/health`)).ok, 30_000);

    procs.push(
      startProcess(
        "kube-apiserver",
        tools.kubeApiserver,
        [
          "--bind-address=127.0.0.1",
          "--advertise-address=127.0.0.1",
          `--secure-port=${apiPort}`,
          `--etcd-servers=${etcd}`,
          `--cert-dir=${join(dir, "pki")}`,
          `--token-auth-file=${join(dir, "tokens.csv")}`,
          `--authorization-mode=${client === undefined ? "RBAC" : "Node,RBAC"}`,
          `--service-account-key-file=${join(dir, "sa.pub")}`,
          `--service-account-signing-key-file=${join(dir, "sa.key")}`,
          "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
          "--service-cluster-ip-range=10.96.0.0/16",
          `--enable-admission-plugins=NamespaceLifecycle,LimitRanger,ServiceAccount,PodSecurity,ResourceQuota${client === undefined ? "" : ",NodeRestriction"}`,
          "--allow-privileged=true",
          // The `kubernetes` Service's endpoints would name a loopback address, which validation refuses.
          "--endpoint-reconciler-type=none",
          "--profiling=false",
          // Debian's etcd 3.4 has no watch progress requests: with the watch-list feature on, kwok's informers stall.
          ...(options.simulated === undefined ? [] : ["--feature-gates=WatchList=false"]),
          ...(options.simulated === undefined ? [] : ["--kubelet-preferred-address-types=InternalIP"]),
          ...(client === undefined
            ? []
            : [
                `--kubelet-client-certificate=${client.cert}`,
                `--kubelet-client-key=${client.key}`,
                "--kubelet-preferred-address-types=InternalIP",
              ]),
          "--v=1",
        ],
        dir,
      ),
    );
    // The API server writes its self-signed chain (serving certificate and CA) once it starts serving.
    await waitFor(
      "kube-apiserver to write its certificate",
      async () => {
        ca = readFileSync(join(dir, "pki", "apiserver.crt"), "utf8");
        return ca.includes("BEGIN CERTIFICATE");
      },
      60_000,
    );
    await waitFor(
      "kube-apiserver to be ready (/readyz)",
      async () => (await api("GET", "/readyz")).status === 200,
      90_000,
    );

    const kubeconfig = kubeconfigFor(server, ca, "sandbox-admin", token);
    writeFileSync(join(dir, "kubeconfig"), kubeconfig, { mode: 0o600 });

    procs.push(
      startProcess(
        "kube-controller-manager",
        tools.kubeControllerManager,
        [
          `--kubeconfig=${join(dir, "kubeconfig")}`,
          `--controllers=${[...CONTROLLERS, ...(client === undefined ? [] : NODE_CONTROLLERS), ...(options.simulated === undefined ? [] : SIMULATED_CONTROLLERS)].join(",")}`,
          // Thousands of Jobs and pods: the controllers' own client limits, not the API server, would set the pace.
          ...(options.simulated === undefined
            ? []
            : ["--kube-api-qps=500", "--kube-api-burst=1000", "--concurrent-job-syncs=50"]),
          ...(client === undefined
            ? []
            : ["--allocate-node-cidrs=true", `--cluster-cidr=${POD_CIDR}`, "--node-cidr-mask-size=24"]),
          `--service-account-private-key-file=${join(dir, "sa.key")}`,
          `--root-ca-file=${join(dir, "pki", "apiserver.crt")}`,
          "--leader-elect=false",
          "--secure-port=0",
          "--v=1",
        ],
        dir,
      ),
    );
    await waitFor(
      "kube-controller-manager to create the default service account",
      async () => (await api("GET", "/api/v1/namespaces/default/serviceaccounts/default")).status === 200,
      90_000,
    );

    if (options.node !== undefined && client !== undefined) {
      const configs = Object.fromEntries(
        Object.entries(identities).map(([k, i]) => {
          const file = join(dir, `${k}.kubeconfig`);
          writeFileSync(file, kubeconfigFor(server, ca, i.user, i.token), { mode: 0o600 });
          return [k, file];
        }),
      ) as Record<keyof typeof identities, string>;
      procs.push(
        startProcess(
          "kube-scheduler",
          options.node.tools.kubeScheduler,
          [`--kubeconfig=${configs.scheduler}`, "--leader-elect=false", "--secure-port=0", "--v=1"],
          dir,
        ),
      );
      node = await startNode(
        {
          dir,
          api,
          waitFor,
          procs,
          admin: join(dir, "kubeconfig"),
          kubelet: configs.kubelet,
          proxy: configs.proxy,
          clientCa: client.ca,
        },
        options.node,
      );
    }

    let simulated: SimulatedNodes | undefined;
    if (options.simulated !== undefined) {
      procs.push(
        startProcess(
          "kube-scheduler",
          options.simulated.scheduler,
          [
            `--kubeconfig=${join(dir, "kubeconfig")}`,
            "--leader-elect=false",
            "--secure-port=0",
            "--kube-api-qps=500",
            "--kube-api-burst=1000",
            "--v=1",
          ],
          dir,
        ),
      );
      simulated = await startSimulatedNodes(
        { dir, api, waitFor, procs, admin: join(dir, "kubeconfig") },
        options.simulated,
      );
    }

    return {
      server,
      token,
      ca,
      kubeconfig,
      dir,
      api,
      waitFor,
      stop,
      ...(node === undefined ? {} : { node }),
      ...(simulated === undefined ? {} : { simulated }),
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
