/**
 * Safe objects in the engines' plain spellings, with places to put one dangerous (or one unusual but safe) setting.
 * Each builder returns the text a user would commit; the extra text is indented to its place.
 */

function indent(text: string, by: number): string {
  const pad = " ".repeat(by);
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => pad + l)
    .join("\n");
}

export interface PodParts {
  /** Extra keys under the pod's `spec` (written at column 0). */
  readonly spec?: string;
  /** Extra keys under the first container (column 0). */
  readonly container?: string;
  /** Extra keys under the container's securityContext (column 0); replaces nothing. */
  readonly containerSecurity?: string;
  /** Replaces the pod securityContext body (column 0). */
  readonly podSecurity?: string;
  /** Extra top-level keys of the object (column 0). */
  readonly top?: string;
  readonly kind?: string;
  readonly apiVersion?: string;
  /** Replaces the container securityContext body (column 0). */
  readonly securityContext?: string;
}

export const SAFE_CONTAINER_SECURITY = `allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]`;

export const SAFE_POD_SECURITY = `runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
seccompProfile:
  type: RuntimeDefault`;

/** The pod spec body (column 0) of a pod that passes every mandatory rule. */
export function podSpec(p: PodParts = {}): string {
  return `automountServiceAccountToken: false
restartPolicy: Never
securityContext:
${indent(p.podSecurity ?? SAFE_POD_SECURITY, 2)}
containers:
  - name: main
    image: busybox:1.36
    command: ["sh", "-c", "echo hello"]
    securityContext:
${indent(p.securityContext ?? SAFE_CONTAINER_SECURITY, 6)}
${p.containerSecurity === undefined ? "" : indent(p.containerSecurity, 6)}
    resources:
      limits:
        cpu: 500m
        memory: 128Mi
${p.container === undefined ? "" : indent(p.container, 4)}
${p.spec === undefined ? "" : p.spec}`
    .split("\n")
    .filter((l) => l.trim() !== "")
    .join("\n");
}

/** A Pod manifest as kubectl users write it. */
export function pod(name: string, p: PodParts = {}): string {
  return `apiVersion: ${p.apiVersion ?? "v1"}
kind: ${p.kind ?? "Pod"}
metadata:
  name: ${name}
${p.top === undefined ? "" : `${p.top}\n`}spec:
${indent(podSpec(p), 2)}
`;
}

/** A Deployment (Helm-output style) wrapping the same pod. */
export function deployment(name: string, p: PodParts = {}): string {
  return `---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${name}
    spec:
${indent(podSpec({ ...p, spec: p.spec }).replace("restartPolicy: Never\n", ""), 6)}
`;
}

/** Keys of a Compose service that pass every mandatory rule (column 0). */
export const SAFE_SERVICE = `image: busybox:1.36
command: ["sh", "-c", "echo hello"]
user: "1000:1000"
read_only: true
cap_drop: [ALL]
security_opt: ["no-new-privileges:true"]
network_mode: none
restart: "no"
mem_limit: 128m
cpus: 0.5`;

/** A compose file with one service `name`, its safe keys plus `extra` (column 0), and `top` top-level keys. */
export function compose(name: string, extra = "", top = ""): string {
  return `services:
  ${name}:
${indent(SAFE_SERVICE, 4)}
${indent(extra, 4)}
${top}
`;
}

/** A Docker Engine API create body (as `docker create` posts it) that passes every mandatory rule. */
export function engineBody(
  overrides: Record<string, unknown> = {},
  host: Record<string, unknown> = {},
): string {
  const body: Record<string, unknown> = {
    Image: "busybox:1.36",
    Cmd: ["sh", "-c", "echo hello"],
    User: "1000:1000",
    Env: ["LANG=C.UTF-8"],
    ...overrides,
    HostConfig: {
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      ReadonlyRootfs: true,
      NetworkMode: "none",
      Memory: 134217728,
      MemorySwap: 134217728,
      NanoCpus: 500000000,
      PidsLimit: 128,
      RestartPolicy: { Name: "no" },
      ...host,
    },
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}
