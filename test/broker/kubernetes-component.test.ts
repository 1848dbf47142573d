/**
 * The broker in the Kubernetes component (Pulumi mocks): its Deployment, Service, ConfigMap and Secret, the
 * NetworkPolicies that let each template reach only its port, the quota that holds its pod, and the pack's verdict
 * on what was registered: the broker's Secret mount passes, the same mount in a task fails.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { SandboxProject } from "../../components/kubernetes/sandboxProject";
import { BROKER_SECRETS_DIR } from "../../components/model";
import { one, outputValue, type Registered, recordingMocks } from "../helpers/pulumiMocks";
import { remediateThenValidate, validateStack } from "../policy/harness";

const NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const SERVICE = "kubernetes:core/v1:Service";
const CONFIGMAP = "kubernetes:core/v1:ConfigMap";
const SECRET = "kubernetes:core/v1:Secret";
const PODTEMPLATE = "kubernetes:core/v1:PodTemplate";
const QUOTA = "kubernetes:core/v1:ResourceQuota";
const TOKEN = "tok-abcdef-0123456789";
/** The key of the engine's wrapper around a secret value. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

let registered: Registered[] = [];

beforeAll(async () => {
  const mocks = await recordingMocks({ stack: "staging" });
  const project = new SandboxProject("team", {
    budget: { monthlyCapUsd: 300, maxConcurrentTasks: 4 },
    broker: {
      routes: {
        gh: {
          upstream: "https://api.example.com",
          paths: ["/repos/**"],
          credential: { secret: "gh", prefix: "Bearer " },
        },
        reg: { upstream: "http://registry.example.org:8081", paths: ["/**"], credential: { secret: "reg" } },
      },
    },
    brokerCredentials: { gh: TOKEN, reg: "r%1" },
    templates: {
      agent: { image: "runner:1", broker: ["gh"] },
      build: { image: "runner:1", broker: ["gh", "reg"], egress: { mode: "proxy", allow: ["pypi.org"] } },
      plain: { image: "runner:1" },
    },
  });
  await outputValue(project.probeJobs);
  registered = await mocks.settle();
});

describe("the broker on Kubernetes", () => {
  it("registers its Deployment, Service, ConfigMap, Secret, service account and policies", () => {
    const names = registered.map((r) => `${r.type}/${r.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        `${DEPLOYMENT}/team-broker`,
        `${SERVICE}/team-broker`,
        `${CONFIGMAP}/team-broker-config`,
        `${SECRET}/team-broker-credentials`,
        "kubernetes:core/v1:ServiceAccount/team-broker-sa",
        `${NETPOL}/team-broker-policy`,
        `${NETPOL}/team-agent-broker`,
        `${NETPOL}/team-build-broker`,
      ]),
    );
    expect(names).not.toContain(`${NETPOL}/team-plain-broker`);
  });

  it("keeps the credentials in the Secret alone, escaped for HAProxy, and only a slow hash of them on the pod", () => {
    const secret = one(registered, SECRET, "team-broker-credentials").inputs;
    // Registered as a Pulumi secret (the engine's secret signature wraps the value), so state holds it encrypted.
    expect(secret.stringData).toEqual({
      [SECRET_SIG]: "1b47061264138c4ac30d75fd1eb44270",
      value: { SANDBOX_BROKER_CRED_GH: TOKEN, SANDBOX_BROKER_CRED_REG: "r%%1" },
    });
    const others = registered.filter((r) => r.type !== SECRET);
    expect(JSON.stringify(others.map((r) => r.inputs))).not.toContain(TOKEN);
    const dep = one(registered, DEPLOYMENT, "team-broker").inputs as {
      spec: {
        template: { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
      };
    };
    expect(dep.spec.template.metadata.annotations["sandbox.broker/credentials-hash"]).toMatch(
      /^[0-9a-f]{32}$/,
    );
    const pod = dep.spec.template.spec as {
      containers: {
        image: string;
        command?: unknown;
        volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
      }[];
      volumes: { name: string; secret?: { secretName: string } }[];
      automountServiceAccountToken: boolean;
    };
    expect(pod.containers[0]?.image).toBe("sandbox-broker:1");
    expect(pod.containers[0]?.command).toBeUndefined();
    expect(pod.containers[0]?.volumeMounts).toContainEqual({
      name: "credentials",
      mountPath: BROKER_SECRETS_DIR,
      readOnly: true,
    });
    expect(pod.volumes).toContainEqual({
      name: "credentials",
      secret: { secretName: "team-broker-credentials", defaultMode: 0o400 },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it("lets each template's pods reach only their own port, and the broker only DNS and the outside minus refused ranges", () => {
    const agent = one(registered, NETPOL, "team-agent-broker").inputs.spec;
    expect(agent).toEqual({
      podSelector: { matchLabels: { "sandbox.template": "agent" } },
      policyTypes: ["Egress"],
      egress: [
        {
          to: [{ podSelector: { matchLabels: { "sandbox.role": "broker" } } }],
          ports: [{ protocol: "TCP", port: 8080 }],
        },
      ],
    });
    const own = one(registered, NETPOL, "team-broker-policy").inputs.spec as {
      ingress: unknown[];
      egress: { to: { ipBlock?: { cidr: string; except: string[] } }[]; ports: { port: number }[] }[];
    };
    expect(own.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { "sandbox.template": "agent" } } }],
        ports: [{ protocol: "TCP", port: 8080 }],
      },
      {
        from: [{ podSelector: { matchLabels: { "sandbox.template": "build" } } }],
        ports: [{ protocol: "TCP", port: 8081 }],
      },
    ]);
    expect(own.egress[1]?.to[0]?.ipBlock?.except).toContain("169.254.0.0/16");
    expect(own.egress[1]?.ports.map((p) => p.port)).toEqual([443, 8081]);
  });

  it("gives the tasks the broker's address by its Service's cluster address, with service links on", () => {
    const t = one(registered, PODTEMPLATE, "team-agent").inputs as {
      template: {
        spec: {
          enableServiceLinks: boolean;
          containers: { name: string; env: { name: string; value: string }[] }[];
        };
      };
    };
    expect(t.template.spec.enableServiceLinks).toBe(true);
    // The task container (the pod's holder, first, has no environment).
    expect(t.template.spec.containers.find((c) => c.name === "task")?.env).toContainEqual({
      name: "SANDBOX_BROKER_URL",
      value: "http://$(TEAM_BROKER_SERVICE_HOST):8080",
    });
    const plain = one(registered, PODTEMPLATE, "team-plain").inputs as {
      template: { spec: { enableServiceLinks: boolean } };
    };
    expect(plain.template.spec.enableServiceLinks).toBe(false);
  });

  it("holds the broker's pod in the quota on top of the task slots and the proxy", () => {
    const hard = (one(registered, QUOTA, "team-quota").inputs.spec as { hard: Record<string, string> }).hard;
    expect(hard.pods).toBe("6");
  });

  it("passes the pack with its Secret mount; a task that mounts the same Secret fails", () => {
    const dep = one(registered, DEPLOYMENT, "team-broker").inputs;
    expect(remediateThenValidate(DEPLOYMENT, dep).outcome.violations).toEqual([]);
    const task = JSON.parse(JSON.stringify(dep)) as {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    task.spec.template.metadata.labels["sandbox.role"] = "task";
    const found = remediateThenValidate(DEPLOYMENT, task).outcome.violations.map((v) => v.message);
    expect(
      found.some((m) => m.includes("mounts Secret volume")),
      found.join("\n"),
    ).toBe(true);
  });

  it("passes the secret-flow stack rule as registered; without its configuration in the stack, the broker fails", () => {
    const flow = (list: readonly Registered[]) =>
      validateStack(
        list.filter((r) => r.custom).map((r) => ({ type: r.type, name: r.name, props: r.inputs })),
      )
        .violations.filter((v) => v.policy === "sandbox-disallow-secret-flow")
        .map((v) => v.message);
    expect(flow(registered)).toEqual([]);
    expect(
      flow(registered.filter((r) => !(r.type === CONFIGMAP && r.name === "team-broker-config"))),
    ).toEqual([
      'Deployment "team-broker": the secrets broker has no routes (or its configuration is not in the stack), so no credential of it can be used',
    ]);
  });
});
