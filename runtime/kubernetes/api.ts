/**
 * The Kubernetes API as the runtime uses it: typed clients from a kubeconfig (a file and a context, or the ambient
 * one), loaded on first use only (the client library costs about a second to load, which Docker verbs never pay).
 */
import type * as K8s from "@kubernetes/client-node";

/** Where a Kubernetes project runs: the stack's `sandbox:kubernetes` (absent: `KUBECONFIG` or ~/.kube/config). */
export interface KubeTarget {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** The API groups the runtime calls. */
export interface KubeApis {
  readonly core: K8s.CoreV1Api;
  readonly batch: K8s.BatchV1Api;
  readonly apps: K8s.AppsV1Api;
  readonly networking: K8s.NetworkingV1Api;
  /** RuntimeClasses (node.k8s.io/v1). */
  readonly node: K8s.NodeV1Api;
  /** The API server's address, for messages. */
  readonly server: string;
  /** The kubeconfig the clients were made from (for watches). */
  readonly config: K8s.KubeConfig;
  /** API requests these clients made so far (a watch counts its own). */
  requests(): number;
  /** Counts one request made outside these clients (an exec's connection). */
  count(): void;
}

/** Clients for the target's cluster. Throws a plain Error naming the kubeconfig when it cannot be read. */
export async function kubeApis(target: KubeTarget = {}): Promise<KubeApis> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  try {
    if (target.kubeconfig !== undefined) kc.loadFromFile(target.kubeconfig);
    else kc.loadFromDefault();
    if (target.context !== undefined) kc.setCurrentContext(target.context);
  } catch (e) {
    throw new Error(
      `cannot read the kubeconfig ${target.kubeconfig ?? "(KUBECONFIG or ~/.kube/config)"}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null) {
    throw new Error(
      `the kubeconfig ${target.kubeconfig ?? "(KUBECONFIG or ~/.kube/config)"} has no current cluster${target.context ? ` for context "${target.context}"` : ""}`,
    );
  }
  // The clients as the kubeconfig makes them, with one more step on every request: it is counted.
  let requests = 0;
  const config = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [
      {
        pre: async (context) => {
          requests++;
          return context;
        },
        post: async (context) => context,
      },
    ],
  });
  return {
    core: new k8s.CoreV1Api(config),
    batch: new k8s.BatchV1Api(config),
    apps: new k8s.AppsV1Api(config),
    networking: new k8s.NetworkingV1Api(config),
    node: new k8s.NodeV1Api(config),
    server: cluster.server,
    config: kc,
    requests: () => requests,
    count: () => {
      requests++;
    },
  };
}

/** The HTTP status of an API error (the client's ApiException), or undefined for any other error. */
export function apiStatus(e: unknown): number | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/** The API server's message in an error (its Status body), else the error's own. */
export function apiMessage(e: unknown): string {
  const body = (e as { body?: unknown } | null)?.body;
  if (typeof body === "string") {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === "string") return parsed.message;
    } catch {}
  }
  if (
    body !== null &&
    typeof body === "object" &&
    typeof (body as { message?: unknown }).message === "string"
  )
    return (body as { message: string }).message;
  return e instanceof Error ? e.message : String(e);
}

/** Runs `call`; a 404 is `undefined`, any other error is thrown. */
export async function orAbsent<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (e) {
    if (apiStatus(e) === 404) return undefined;
    throw e;
  }
}
