/**
 * The off switch on Kubernetes: every Job, pod and ConfigMap labelled with the project in its namespace, and the egress
 * proxy's Deployment and Service, deleted (foreground: a Job's pods and a Deployment's ReplicaSets and pods go first),
 * then waited for until no pod of the project is left. It leaves the walls standing: the namespace, its quota,
 * LimitRange, NetworkPolicies, ServiceAccounts and PodTemplates are `destroy`'s (deleting a policy would open a way
 * out, not close one). Needs only the namespace, so it runs when the stack's config no longer passes.
 */
import { LABELS } from "../../components/model";
import { apiMessage, type KubeApis, orAbsent } from "./api";

export interface KubeOffReport {
  readonly namespace: string;
  readonly jobs: readonly string[];
  readonly pods: readonly string[];
  readonly configMaps: readonly string[];
  /** The proxy's Deployment and Service (`deployment/<name>`, `service/<name>`). */
  readonly proxy: readonly string[];
}

/** Seconds the off switch waits for the project's pods to be gone. */
export const KUBE_OFF_WAIT_SECONDS = 60;

// biome-ignore lint/suspicious/noExplicitAny: objects as the client returns them, read by name only
type Obj = any;
const names = (list: { items: Obj[] }) => list.items.map((o: Obj) => String(o.metadata?.name)).sort();

export async function kubeOffSwitch(apis: KubeApis, namespace: string): Promise<KubeOffReport> {
  const selector = { namespace, labelSelector: `${LABELS.project}=${namespace}` };
  const foreground = { namespace, propagationPolicy: "Foreground", gracePeriodSeconds: 0 } as const;
  const [jobs, pods, maps, deployments, services] = await Promise.all([
    apis.batch.listNamespacedJob(selector),
    apis.core.listNamespacedPod(selector),
    apis.core.listNamespacedConfigMap(selector),
    apis.apps.listNamespacedDeployment(selector),
    apis.core.listNamespacedService(selector),
  ]);
  const failures: string[] = [];
  const del = async (what: string, call: () => Promise<unknown>) => {
    try {
      await orAbsent(call);
    } catch (e) {
      failures.push(`${what}: ${apiMessage(e)}`);
    }
  };
  await Promise.all([
    ...names(jobs).map((name) =>
      del(`job/${name}`, () => apis.batch.deleteNamespacedJob({ name, ...foreground })),
    ),
    ...names(deployments).map((name) =>
      del(`deployment/${name}`, () => apis.apps.deleteNamespacedDeployment({ name, ...foreground })),
    ),
    ...names(services).map((name) =>
      del(`service/${name}`, () => apis.core.deleteNamespacedService({ name, namespace })),
    ),
    ...names(maps).map((name) =>
      del(`configmap/${name}`, () => apis.core.deleteNamespacedConfigMap({ name, namespace })),
    ),
    ...names(pods).map((name) =>
      del(`pod/${name}`, () => apis.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 })),
    ),
  ]);
  const until = Date.now() + KUBE_OFF_WAIT_SECONDS * 1000;
  let left: string[] = [];
  for (;;) {
    left = [
      ...names(await apis.core.listNamespacedPod(selector)),
      ...names(await apis.batch.listNamespacedJob(selector)),
    ];
    if (left.length === 0 || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (failures.length > 0 || left.length > 0) {
    throw new Error(
      [
        `the off switch could not remove everything of ${namespace}:`,
        ...failures.map((f) => `  - ${f}`),
        ...(left.length > 0 ? [`  - still there after ${KUBE_OFF_WAIT_SECONDS} s: ${left.join(", ")}`] : []),
      ].join("\n"),
    );
  }
  return {
    namespace,
    jobs: names(jobs),
    pods: names(pods),
    configMaps: names(maps),
    proxy: [
      ...names(deployments).map((n) => `deployment/${n}`),
      ...names(services).map((n) => `service/${n}`),
    ],
  };
}
