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
}

/** A Kubernetes Ingress or Gateway API object: an entry point from outside the cluster. */
export interface IngressView {
  readonly subject: "ingress";
  readonly origin: Origin;
  /** Hosts or listeners, for the message. */
  readonly hosts: readonly string[];
}

/** An object that may create workloads the rules cannot see inside (a Helm release, an unknown pod-like kind). */
export interface UnjudgedView {
  readonly subject: "unjudged";
  readonly origin: Origin;
  /** Why it may run something and why the rules cannot read what, for the message. */
  readonly reason: string;
}
