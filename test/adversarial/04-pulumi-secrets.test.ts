/**
 * Class 4: Pulumi secrets in any field a rule reads. `pulumi preview --json` prints a secret input as the string
 * "[secret]"; `pulumi stack export` writes it as {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
 * "ciphertext": "..."} (or "plaintext": the JSON text of the value, with --show-secrets). A secret hides the value from
 * the scan, never from the engine: a wall the rules cannot read is never read as absent, so the resource is blocked.
 */
import { blocked, cases, type Files } from "./harness";

const SIG = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const URN = "urn:pulumi:dev::app::docker:index/container:Container::task";
const POD_URN = "urn:pulumi:dev::app::kubernetes:core/v1:Pod::task";

const safeContainer = (): Record<string, unknown> => ({
  name: "task",
  image: "busybox:1.36",
  user: "1000:1000",
  capabilities: { drops: ["ALL"] },
  securityOpts: ["no-new-privileges:true"],
  readOnly: true,
  memory: 128,
  cpuShares: 512,
  networkMode: "none",
  restart: "no",
});

const safePodInputs = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "task" },
  spec: {
    automountServiceAccountToken: false,
    restartPolicy: "Never",
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    },
    containers: [
      {
        name: "main",
        image: "busybox:1.36",
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        },
        resources: { limits: { cpu: "500m", memory: "128Mi" } },
      },
    ],
    ...spec,
  },
});

function preview(type: string, urn: string, inputs: Record<string, unknown>): Files {
  return {
    "preview.json": JSON.stringify(
      {
        config: {},
        steps: [
          { op: "create", urn, provider: "", newState: { urn, custom: true, type, inputs, outputs: {} } },
        ],
        changeSummary: { create: 1 },
      },
      null,
      2,
    ),
  };
}

function state(type: string, urn: string, inputs: Record<string, unknown>): Files {
  return {
    "stack.json": JSON.stringify(
      {
        version: 3,
        deployment: {
          manifest: { time: "2025-01-01T00:00:00Z", magic: "0".repeat(64), version: "v3.200.0" },
          secrets_providers: { type: "passphrase", state: { salt: "v1:AAAA:v1:BBBB:CCCC" } },
          resources: [
            {
              urn: "urn:pulumi:dev::app::pulumi:pulumi:Stack::app-dev",
              custom: false,
              type: "pulumi:pulumi:Stack",
            },
            { urn, custom: true, id: "0123abcd", type, inputs, outputs: inputs },
          ],
        },
      },
      null,
      2,
    ),
  };
}

const CONTAINER = "docker:index/container:Container";
const POD = "kubernetes:core/v1:Pod";
const cipher = { [SIG]: SECRET_SIG, ciphertext: "v1:Zm9vYmFy:bm90IHJlYWRhYmxl" };
const plaintext = (v: unknown) => ({ [SIG]: SECRET_SIG, plaintext: JSON.stringify(v) });
const sock = [{ hostPath: "/var/run/docker.sock", containerPath: "/var/run/docker.sock" }];

cases("class 4: [secret] in pulumi preview --json", [
  {
    name: 'docker.Container privileged: "[secret]"',
    files: preview(CONTAINER, URN, { ...safeContainer(), privileged: "[secret]" }),
    plain: preview(CONTAINER, URN, { ...safeContainer(), privileged: true }),
    want: blocked(undefined, "task"),
  },
  {
    name: 'docker.Container volumes[0].hostPath: "[secret]"',
    files: preview(CONTAINER, URN, {
      ...safeContainer(),
      volumes: [{ hostPath: "[secret]", containerPath: "/s" }],
    }),
    plain: preview(CONTAINER, URN, { ...safeContainer(), volumes: sock }),
    want: blocked(undefined, "task"),
  },
  {
    name: 'docker.Container networkMode: "[secret]"',
    files: preview(CONTAINER, URN, { ...safeContainer(), networkMode: "[secret]" }),
    plain: preview(CONTAINER, URN, { ...safeContainer(), networkMode: "host" }),
    want: blocked(undefined, "task"),
  },
  {
    name: 'docker.Container capabilities: "[secret]" (the whole drop list hidden)',
    files: preview(CONTAINER, URN, { ...safeContainer(), capabilities: "[secret]" }),
    plain: preview(CONTAINER, URN, { ...safeContainer(), capabilities: { adds: ["NET_ADMIN"] } }),
    want: blocked(undefined, "task"),
  },
  {
    name: 'docker.Container user: "[secret]"',
    files: preview(CONTAINER, URN, { ...safeContainer(), user: "[secret]" }),
    plain: preview(CONTAINER, URN, { ...safeContainer(), user: "0" }),
    want: blocked(undefined, "task"),
  },
  {
    name: 'kubernetes Pod spec.hostNetwork: "[secret]"',
    files: preview(POD, POD_URN, safePodInputs({ hostNetwork: "[secret]" })),
    plain: preview(POD, POD_URN, safePodInputs({ hostNetwork: true })),
    want: blocked(undefined, "task"),
  },
  {
    name: 'kubernetes Pod volumes[0].hostPath.path: "[secret]"',
    files: preview(POD, POD_URN, safePodInputs({ volumes: [{ name: "s", hostPath: { path: "[secret]" } }] })),
    plain: preview(
      POD,
      POD_URN,
      safePodInputs({ volumes: [{ name: "s", hostPath: { path: "/var/run/docker.sock" } }] }),
    ),
    want: blocked(undefined, "task"),
  },
  {
    name: 'kubernetes Pod spec.securityContext: "[secret]" (runAsUser hidden)',
    files: preview(POD, POD_URN, safePodInputs({ securityContext: "[secret]" })),
    plain: preview(
      POD,
      POD_URN,
      safePodInputs({ securityContext: { runAsUser: 0, seccompProfile: { type: "RuntimeDefault" } } }),
    ),
    want: blocked(undefined, "task"),
  },
]);

cases("class 4: secrets in a pulumi stack export", [
  {
    name: "docker.Container privileged as ciphertext",
    files: state(CONTAINER, URN, { ...safeContainer(), privileged: cipher }),
    plain: state(CONTAINER, URN, { ...safeContainer(), privileged: true }),
    want: blocked(undefined, "task"),
  },
  {
    name: "docker.Container volumes as ciphertext (the whole list)",
    files: state(CONTAINER, URN, { ...safeContainer(), volumes: cipher }),
    plain: state(CONTAINER, URN, { ...safeContainer(), volumes: sock }),
    want: blocked(undefined, "task"),
  },
  {
    name: "docker.Container volumes[0].hostPath as ciphertext",
    files: state(CONTAINER, URN, {
      ...safeContainer(),
      volumes: [{ hostPath: cipher, containerPath: "/s" }],
    }),
    plain: state(CONTAINER, URN, { ...safeContainer(), volumes: sock }),
    want: blocked(undefined, "task"),
  },
  {
    name: "docker.Container privileged as --show-secrets plaintext true",
    files: state(CONTAINER, URN, { ...safeContainer(), privileged: plaintext(true) }),
    plain: state(CONTAINER, URN, { ...safeContainer(), privileged: true }),
    want: blocked("sandbox-disallow-privileged", "task"),
  },
  {
    name: "docker.Container volumes[0].hostPath as plaintext /var/run/docker.sock",
    files: state(CONTAINER, URN, {
      ...safeContainer(),
      volumes: [{ hostPath: plaintext("/var/run/docker.sock"), containerPath: "/s" }],
    }),
    plain: state(CONTAINER, URN, { ...safeContainer(), volumes: sock }),
    want: blocked("sandbox-disallow-runtime-socket", "task"),
  },
  {
    name: "kubernetes Pod spec.hostPID as ciphertext",
    files: state(POD, POD_URN, safePodInputs({ hostPID: cipher })),
    plain: state(POD, POD_URN, safePodInputs({ hostPID: true })),
    want: blocked(undefined, "task"),
  },
  {
    name: "kubernetes Pod container securityContext as ciphertext",
    files: state(POD, POD_URN, {
      ...safePodInputs(),
      spec: {
        ...(safePodInputs().spec as Record<string, unknown>),
        containers: [
          {
            name: "main",
            image: "busybox",
            securityContext: cipher,
            resources: { limits: { cpu: "1", memory: "1Gi" } },
          },
        ],
      },
    }),
    plain: state(POD, POD_URN, {
      ...safePodInputs(),
      spec: {
        ...(safePodInputs().spec as Record<string, unknown>),
        containers: [
          {
            name: "main",
            image: "busybox",
            securityContext: { privileged: true },
            resources: { limits: { cpu: "1", memory: "1Gi" } },
          },
        ],
      },
    }),
    want: blocked(undefined, "task"),
  },
]);
