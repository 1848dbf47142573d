/** The rule views of what is not a workload: exposure objects, and objects the rules cannot see inside. */
import type { Origin, Val } from "./values";

/** A Kubernetes Service, for the exposure rule. */
export interface ServiceView {
  readonly subject: "service";
  readonly origin: Origin;
  readonly serviceType: Val<string>;
  readonly externalIPs: Val<readonly Val<string>[]>;
  /** `nodePort` values set on ports (only honored for NodePort/LoadBalancer). */
  readonly nodePorts: readonly Val<number>[];
  /** Where an operator object writes the type (`spec.kafka.listeners[1].type`); absent for a core Service. */
  readonly typePath?: string;
  /** Where an operator object writes the external IPs, when it can. */
  readonly externalIPsPath?: string;
  /**
   * For an operator's setting: the only values that keep the service inside the cluster (any other, a placeholder
   * included, is refused). Absent for a core Service, whose NodePort and LoadBalancer types are refused.
   */
  readonly closedTypes?: readonly string[];
}

/** A Kubernetes Ingress or Gateway API object: an entry point from outside the cluster. */
export interface IngressView {
  readonly subject: "ingress";
  readonly origin: Origin;
  /** Hosts or listeners, for the message. */
  readonly hosts: readonly string[];
  /** Where the object opens the way in (an operator's switch, a tunnel's route), when it is one field. */
  readonly path?: string;
}

/** An object that may create workloads the rules cannot see inside (a Helm release, an unknown pod-like kind). */
export interface UnjudgedView {
  readonly subject: "unjudged";
  readonly origin: Origin;
  /** Why it may run something and why the rules cannot read what, for the message. */
  readonly reason: string;
}
