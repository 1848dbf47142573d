// A throwaway Kubernetes control plane for the engine tests: etcd, kube-apiserver and kube-controller-manager on free
// loopback ports, every file in a temporary folder, no kubelet (pods are admitted or rejected, and stay Pending).
// The API server runs RBAC, a static token, a service-account key pair, and the admission plugins the sandbox relies
// on: PodSecurity, ResourceQuota, LimitRanger, NamespaceLifecycle, ServiceAccount.
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
  exited?: number | string | null;
}

function startProcess(name: string, bin: string, args: string[], dir: string): Proc {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, "a");
  const child = spawn(bin, args, { stdio: ["ignore", fd, fd], cwd: dir });
  closeSync(fd);
  const proc: Proc = { name, child, log };
  child.on("exit", (code, signal) => {
    proc.exited = code ?? signal;
  });
  return proc;
}

async function stopProcess(p: Proc): Promise<void> {
  if (p.exited !== undefined || p.child.exitCode !== null) return;
  const gone = new Promise<void>((r) => p.child.once("exit", () => r()));
  p.child.kill("SIGTERM");
  const killed = await Promise.race([gone.then(() => true), sleep(10_000).then(() => false)]);
  if (!killed) {
    p.child.kill("SIGKILL");
    await gone;
  }
}

/** Starts etcd, kube-apiserver and kube-controller-manager; resolves once the `default` service account exists. */
export async function startCluster(tools: EngineToolchain): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-engine-kube-"));
  const procs: Proc[] = [];
  // If the test process dies, its control plane dies with it.
  const onExit = () => {
    for (const p of procs) if (p.exited === undefined) p.child.kill("SIGKILL");
  };
  process.once("exit", onExit);
  const stop = async () => {
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
    writeFileSync(join(dir, "tokens.csv"), `${token},sandbox-admin,sandbox-admin,"system:masters"\n`, {
      mode: 0o600,
    });
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
          "--authorization-mode=RBAC",
          `--service-account-key-file=${join(dir, "sa.pub")}`,
          `--service-account-signing-key-file=${join(dir, "sa.key")}`,
          "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
          "--service-cluster-ip-range=10.96.0.0/16",
          "--enable-admission-plugins=NamespaceLifecycle,LimitRanger,ServiceAccount,PodSecurity,ResourceQuota",
          "--allow-privileged=true",
          // The `kubernetes` Service's endpoints would name a loopback address, which validation refuses.
          "--endpoint-reconciler-type=none",
          "--profiling=false",
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

    const kubeconfig = JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "sandbox-test",
          cluster: { server, "certificate-authority-data": Buffer.from(ca).toString("base64") },
        },
      ],
      users: [{ name: "sandbox-admin", user: { token } }],
      contexts: [{ name: "sandbox-test", context: { cluster: "sandbox-test", user: "sandbox-admin" } }],
      "current-context": "sandbox-test",
    });
    writeFileSync(join(dir, "kubeconfig"), kubeconfig, { mode: 0o600 });

    procs.push(
      startProcess(
        "kube-controller-manager",
        tools.kubeControllerManager,
        [
          `--kubeconfig=${join(dir, "kubeconfig")}`,
          "--controllers=namespace-controller,serviceaccount-controller,serviceaccount-token-controller,resourcequota-controller,job-controller,garbage-collector-controller,ttl-after-finished-controller",
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

    return { server, token, ca, kubeconfig, dir, api, waitFor, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
