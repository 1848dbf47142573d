/**
 * The project's proxy and broker on Kubernetes, as their logs tell it: one of each in the project's namespace,
 * serving every template (the listener names the template). A task's own records are the lines whose client is its
 * pod's address, since the task started.
 */
import {
  type BrokerCall,
  decisionReason,
  LABELS,
  type ProxyDecision,
  parseBrokerLog,
  parseDecisionLog,
} from "../../components/model";
import type { KubeApis } from "./api";

/** The logs of the project's pods of `role` (the container of the same name), each as one text. */
export async function unitLogTexts(
  apis: KubeApis,
  namespace: string,
  role: "proxy" | "broker",
  sinceMs?: number,
): Promise<string[]> {
  const pods = await apis.core.listNamespacedPod({
    namespace,
    labelSelector: `${LABELS.project}=${namespace},${LABELS.role}=${role}`,
  });
  const texts: string[] = [];
  for (const pod of pods.items) {
    const sinceSeconds =
      sinceMs === undefined ? undefined : Math.max(1, Math.ceil((Date.now() - sinceMs) / 1000) + 1);
    const text = await apis.core.readNamespacedPodLog({
      name: pod.metadata?.name ?? "",
      namespace,
      container: role,
      ...(sinceSeconds === undefined ? {} : { sinceSeconds }),
    });
    texts.push(String(text));
  }
  return texts;
}

/** The proxy's decisions about one task (its pod's address, since it started), each with its reason. */
export async function taskEgress(
  apis: KubeApis,
  namespace: string,
  podIp: string,
  sinceMs: number,
  allow: readonly string[],
): Promise<(ProxyDecision & { reason: string })[]> {
  const texts = await unitLogTexts(apis, namespace, "proxy", sinceMs);
  return texts
    .flatMap(parseDecisionLog)
    .filter((d) => d.client === podIp && d.time * 1000 >= sinceMs - 1000)
    .sort((a, b) => a.time - b.time)
    .map((d) => ({ ...d, reason: decisionReason(d, allow) }));
}

/** The broker's calls of one task (its pod's address, since it started). */
export async function taskBrokerCalls(
  apis: KubeApis,
  namespace: string,
  podIp: string,
  sinceMs: number,
): Promise<BrokerCall[]> {
  const texts = await unitLogTexts(apis, namespace, "broker", sinceMs);
  return texts
    .flatMap(parseBrokerLog)
    .filter((c) => c.client === podIp && c.time * 1000 >= sinceMs - 1000)
    .sort((a, b) => a.time - b.time);
}
