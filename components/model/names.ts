/**
 * The names of the objects a project creates on its engine or cluster, each derived from the project's name in one
 * place, whichever of the components or the runtime creates them.
 *
 * Pulumi's own resource names (the second part of a URN) are not here: each component derives them from the
 * component's name, once, and they are part of its state.
 */

/** The project's internal network (Docker): no route off the machine, traffic between containers disabled. */
export function projectNetworkName(project: string): string {
  return `${project}-net`;
}

/** The network the proxy reaches the outside through (Docker): the only network of the project with a route out. */
export function egressNetworkName(project: string): string {
  return `${project}-egress`;
}

/**
 * The egress proxy's name: its container and the alias tasks resolve it by (Docker), its Service, Deployment and
 * service account (Kubernetes).
 */
export function proxyName(project: string): string {
  return `${project}-proxy`;
}

/**
 * The secrets broker's name: its container and the alias tasks resolve it by (Docker), its Service, Deployment and
 * service account (Kubernetes).
 */
export function brokerName(project: string): string {
  return `${project}-broker`;
}

/**
 * One template's own proxy or broker container (Docker): `<project>-proxy-<template>`, `<project>-broker-<template>`.
 * On its template's task networks it answers to the shared name (`<project>-proxy`, `<project>-broker`).
 */
export function serviceUnitName(service: string, template: string): string {
  return `${service}-${template}`;
}

/** The ConfigMap holding the broker's generated configuration (Kubernetes). */
export function brokerConfigMapName(project: string): string {
  return `${brokerName(project)}-config`;
}

/** The Secret holding the broker's credentials, mounted into the broker alone (Kubernetes). */
export function brokerSecretName(project: string): string {
  return `${brokerName(project)}-credentials`;
}

/** The NetworkPolicy of the broker's own pod (Kubernetes). */
export function brokerPolicyName(project: string): string {
  return `${brokerName(project)}-policy`;
}

/** The NetworkPolicy that lets a template's pods reach the broker on its port (Kubernetes). */
export function templateBrokerPolicyName(project: string, template: string): string {
  return `${project}-${template}-broker`;
}

/** The network a proxy-mode template's probe runs on (Docker): its own, shared only with the proxy. */
export function probeNetworkName(project: string, template: string): string {
  return `${project}-probe-${template}-net`;
}

/** The volume that stands in for a probe's job folder (Docker): named, so the probe's mount is known at preview. */
export function probeJobVolumeName(project: string, template: string): string {
  return `${project}-probe-${template}-job`;
}

/** One task's container (Docker). */
export function taskContainerName(project: string, taskId: string): string {
  return `${project}-task-${taskId}`;
}

/** One task's own network (Docker, proxy mode): it holds the task and the proxy, nothing else. */
export function taskNetworkName(project: string, taskId: string): string {
  return `${taskContainerName(project, taskId)}-net`;
}

/** The ResourceQuota that holds the budget (Kubernetes). */
export function quotaName(project: string): string {
  return `${project}-budget`;
}

/** The LimitRange: defaults for a container without limits; one above the largest template is refused (Kubernetes). */
export function limitRangeName(project: string): string {
  return `${project}-limits`;
}

/** The NetworkPolicy that denies every pod of the namespace all ingress and egress (Kubernetes). */
export function defaultDenyPolicyName(project: string): string {
  return `${project}-default-deny`;
}

/** The NetworkPolicy that lets a proxy-mode template's pods reach its proxy port and nothing else (Kubernetes). */
export function templateEgressPolicyName(project: string, template: string): string {
  return `${project}-${template}-egress-proxy`;
}

/** The proxy's own NetworkPolicy: in from proxy-mode tasks only, out to DNS and the allowed ports (Kubernetes). */
export function proxyPolicyName(project: string): string {
  return `${proxyName(project)}-policy`;
}

/** The ConfigMap that holds the proxy's generated configuration (Kubernetes). */
export function proxyConfigMapName(project: string): string {
  return `${proxyName(project)}-config`;
}

/** The service account every task and probe pod runs as, without a token (Kubernetes). */
export function taskServiceAccountName(project: string): string {
  return `${project}-task`;
}

/** A template's PodTemplate (Kubernetes). */
export function podTemplateName(project: string, template: string): string {
  return `${project}-${template}`;
}

/** One task's Job (Kubernetes): cut to the 63 characters of a label value, without a trailing `-`. */
export function taskJobName(project: string, template: string, taskId: string): string {
  return `${project}-${template}-${taskId}`.slice(0, 63).replace(/-+$/, "");
}
