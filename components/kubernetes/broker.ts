/**
 * The secrets broker on Kubernetes: its Deployment (hardened like a task pod), its Service, the ConfigMap holding its
 * generated configuration and the Secret holding its credentials, mounted into the broker alone. Plain objects; the
 * component only wires them.
 */
import {
  BROKER_CONFIG_DIR,
  BROKER_RUN_DIR,
  BROKER_SECRETS_DIR,
  type BrokerSpec,
  brokerConfigMapName,
  brokerSecretName,
  LABELS,
  parseUser,
} from "../model";
import { restrictedContainer, restrictedPod } from "./pod";
import { cpuQuantity, mibQuantity } from "./quantities";

/** Ephemeral storage of the broker pod (it writes nothing but its runtime files, which are memory). */
export const BROKER_DISK_MIB = 64;

/** The annotation whose change rolls the broker when a credential changed (a slow hash, never the value). */
export const BROKER_SECRET_HASH_ANNOTATION = "sandbox.broker/credentials-hash";

/** The labels that select the broker's pods. */
export function brokerSelector(project: string): Record<string, string> {
  return { [LABELS.project]: project, [LABELS.role]: "broker" };
}

/** The ConfigMap that holds the broker's generated configuration (no credential is in it). */
export function brokerConfigMap(broker: BrokerSpec) {
  return {
    metadata: {
      name: brokerConfigMapName(broker.project),
      namespace: broker.project,
      labels: { ...broker.labels },
    },
    data: { "haproxy.cfg": broker.config },
  };
}

/** The Secret's metadata: its data (`variable → credential`, escaped for HAProxy) comes from the stack's secrets. */
export function brokerSecretMetadata(broker: BrokerSpec) {
  return { name: brokerSecretName(broker.project), namespace: broker.project, labels: { ...broker.labels } };
}

/** The broker's Service: a cluster address for its listener ports, named `<project>-broker`. */
export function brokerServiceSpec(broker: BrokerSpec) {
  return {
    type: "ClusterIP",
    selector: brokerSelector(broker.project),
    ports: broker.listeners.map((l) => ({
      name: `t-${l.port}`,
      protocol: "TCP",
      port: l.port,
      targetPort: l.port,
    })),
  };
}

/**
 * The broker's Deployment: one replica, hardened like a task pod (non-root, read-only root with a memory tmpfs for
 * HAProxy's runtime files, every capability dropped, no escalation, RuntimeDefault seccomp, requests = limits, no
 * service-account token), its configuration from the ConfigMap and its credentials from the Secret, read-only,
 * mounted nowhere else. The configuration's hash and `credentialsHash` are pod annotations: either change rolls it.
 */
export function brokerDeploymentSpec<Hash>(
  broker: BrokerSpec,
  serviceAccount: string,
  credentialsHash: Hash,
  enabled = true,
) {
  const { uid, gid } = parseUser(broker.user);
  const limits = {
    cpu: cpuQuantity(broker.resources.vcpu),
    memory: mibQuantity(broker.resources.memoryMb),
    "ephemeral-storage": mibQuantity(BROKER_DISK_MIB),
  };
  const labels = { ...broker.labels, ...brokerSelector(broker.project) };
  return {
    // A disabled project (the hard stop) runs no broker either.
    replicas: enabled ? 1 : 0,
    selector: { matchLabels: brokerSelector(broker.project) },
    template: {
      metadata: {
        labels,
        annotations: {
          "sandbox.broker/config-hash": broker.configHash,
          [BROKER_SECRET_HASH_ANNOTATION]: credentialsHash,
        },
      },
      spec: {
        ...restrictedPod(serviceAccount, uid, gid, false),
        containers: [
          {
            name: "broker",
            image: broker.image,
            ports: broker.listeners.map((l) => ({
              name: `t-${l.port}`,
              containerPort: l.port,
              protocol: "TCP",
            })),
            securityContext: restrictedContainer(uid, gid, ["ALL"]),
            resources: { requests: limits, limits },
            readinessProbe: { tcpSocket: { port: broker.listeners[0]?.port ?? 8080 }, periodSeconds: 5 },
            volumeMounts: [
              { name: "run", mountPath: BROKER_RUN_DIR },
              { name: "tmp", mountPath: "/tmp" },
              { name: "config", mountPath: BROKER_CONFIG_DIR, readOnly: true },
              { name: "credentials", mountPath: BROKER_SECRETS_DIR, readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: "run", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(broker.resources.tmpfsMb) } },
          { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(broker.resources.tmpfsMb) } },
          { name: "config", configMap: { name: brokerConfigMapName(broker.project) } },
          {
            name: "credentials",
            secret: { secretName: brokerSecretName(broker.project), defaultMode: 0o400 },
          },
        ],
      },
    },
  };
}
