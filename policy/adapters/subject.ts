/** One entry point: a resource's type token and props -> the view the rules judge, or nothing to judge. */
import type { Subject } from "../workload";
import { adaptDockerContainer, DOCKER_CONTAINER_TYPE } from "./docker";
import { adaptKubernetesWorkload } from "./kubernetes";
import { adaptLaunchSpec, LAUNCH_TYPE } from "./launch";
import { noTaint, type TaintCheck } from "./read";
import { adaptIngress, adaptService, isIngressType, isServiceType } from "./service";

export function adaptResource(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): Subject | undefined {
  if (type === DOCKER_CONTAINER_TYPE) return adaptDockerContainer(props, name, tainted);
  if (type === LAUNCH_TYPE) return adaptLaunchSpec(props, name, tainted);
  if (isServiceType(type)) return adaptService(type, props, name);
  if (isIngressType(type)) return adaptIngress(type, props, name);
  return adaptKubernetesWorkload(type, props, name, tainted);
}
