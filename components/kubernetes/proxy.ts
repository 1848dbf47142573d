/**
 * The egress proxy on Kubernetes: its Deployment (hardened like a task pod), its Service and the ConfigMap holding its
 * generated configuration. Plain objects; the component only wires them.
 */
import {
  LABELS,
  PROXY_CONFIG_DIR,
  PROXY_RUN_DIR,
  type ProxySpec,
  parseUser,
  proxyConfigMapName,
} from "../model";
import { restrictedContainer, restrictedPod } from "./pod";
import { cpuQuantity, mibQuantity } from "./quantities";

/** Ephemeral storage of the proxy pod (it writes nothing but its runtime files, which are memory). */
export const PROXY_DISK_MIB = 64;

/** The labels that select the proxy's pods. */
export function proxySelector(project: string): Record<string, string> {
  return { [LABELS.project]: project, [LABELS.role]: "proxy" };
}

/** The ConfigMap that holds the proxy's generated configuration (the image reads it from its config folder). */
export function proxyConfigMap(proxy: ProxySpec) {
  return {
    metadata: {
      name: proxyConfigMapName(proxy.project),
      namespace: proxy.project,
      labels: { ...proxy.labels },
    },
    data: { "squid.conf": proxy.config },
  };
}

/** The proxy's Service: a cluster address for its listener ports, named `<project>-proxy`. */
export function proxyServiceSpec(proxy: ProxySpec) {
  return {
    type: "ClusterIP",
    selector: proxySelector(proxy.project),
    ports: proxy.listeners.map((l) => ({
      name: `t-${l.port}`,
      protocol: "TCP",
      port: l.port,
      targetPort: l.port,
    })),
  };
}

/**
 * The proxy's Deployment: one replica, hardened like a task pod (non-root 13:13, read-only root with a memory
 * tmpfs for Squid's runtime files, every capability dropped, no escalation, RuntimeDefault seccomp, requests =
 * limits, no service-account token). The configuration's hash is a pod annotation, so a changed allowlist rolls it.
 */
export function proxyDeploymentSpec(proxy: ProxySpec, serviceAccount: string, enabled = true) {
  const { uid, gid } = parseUser(proxy.user);
  const limits = {
    cpu: cpuQuantity(proxy.resources.vcpu),
    memory: mibQuantity(proxy.resources.memoryMb),
    "ephemeral-storage": mibQuantity(PROXY_DISK_MIB),
  };
  const labels = { ...proxy.labels, ...proxySelector(proxy.project) };
  return {
    // A disabled project (the hard stop) runs no proxy either.
    replicas: enabled ? 1 : 0,
    selector: { matchLabels: proxySelector(proxy.project) },
    template: {
      metadata: { labels, annotations: { "sandbox.proxy/config-hash": proxy.configHash } },
      spec: {
        ...restrictedPod(serviceAccount, uid, gid, false),
        containers: [
          {
            name: "proxy",
            image: proxy.image,
            ports: proxy.listeners.map((l) => ({
              name: `t-${l.port}`,
              containerPort: l.port,
              protocol: "TCP",
            })),
            securityContext: restrictedContainer(uid, gid, ["ALL"]),
            resources: { requests: limits, limits },
            readinessProbe: { tcpSocket: { port: proxy.listeners[0]?.port ?? 3128 }, periodSeconds: 5 },
            volumeMounts: [
              { name: "run", mountPath: PROXY_RUN_DIR },
              { name: "tmp", mountPath: "/tmp" },
              { name: "config", mountPath: PROXY_CONFIG_DIR, readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: "run", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(proxy.resources.tmpfsMb) } },
          { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(proxy.resources.tmpfsMb) } },
          { name: "config", configMap: { name: proxyConfigMapName(proxy.project) } },
        ],
      },
    },
  };
}
