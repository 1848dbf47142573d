/**
 * A stronger runtime on Kubernetes: its pods name a RuntimeClass, and the node runs them with that class's handler.
 * Without the class the cluster refuses the pods at admission; without the handler the node cannot start them. A task
 * never runs under a weaker runtime instead: both are refused, naming what is missing.
 */
import { RUNTIME_CLASSES } from "../../components/kubernetes/pod";
import type { LaunchSpec } from "../../components/model";
import { LaunchRefused } from "../launch-errors";
import { apiMessage, type KubeApis, orAbsent } from "./api";

// biome-ignore lint/suspicious/noExplicitAny: pod and event objects as the client returns them, read field by field
type Obj = any;

/** Refuses, before anything is created, a runtime whose RuntimeClass the cluster does not have. */
export async function checkRuntimeClass(apis: KubeApis, spec: LaunchSpec): Promise<void> {
  if (spec.runtime === "runc") return;
  const name = RUNTIME_CLASSES[spec.runtime];
  const found: Obj = await orAbsent(() => apis.node.readRuntimeClass({ name })).catch((e) => {
    throw new LaunchRefused(spec.template, [
      `cannot read RuntimeClass ${name} from ${apis.server}: ${apiMessage(e)}`,
    ]);
  });
  if (found === undefined) {
    throw new LaunchRefused(spec.template, [
      `runtime ${spec.runtime} runs in pods of RuntimeClass "${name}", which the cluster at ${apis.server} does not have: deploy the stack (\`up\` creates it unless kubernetes.runtimeClasses.${spec.runtime}.create is false) or install it on the cluster`,
    ]);
  }
}

/** The container runtime's word that the node has no handler for the pod's RuntimeClass, if it said so. */
export async function missingHandler(
  apis: KubeApis,
  namespace: string,
  pod: Obj,
): Promise<string | undefined> {
  const events = await apis.core
    .listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${pod.metadata.name}`,
    })
    .catch(() => undefined);
  const failed = (events?.items ?? []).find(
    (e: Obj) =>
      e.reason === "FailedCreatePodSandBox" &&
      /no runtime for .* is configured|RuntimeHandler/i.test(e.message),
  );
  return failed === undefined ? undefined : String(failed.message);
}
