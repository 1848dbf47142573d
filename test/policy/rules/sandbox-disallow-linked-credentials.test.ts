/**
 * sandbox-disallow-linked-credentials (stack rule): a credential that reaches a task through another object of the
 * input. A ConfigMap the pod reads (configMapKeyRef, envFrom.configMapRef, a configMap volume, a projected configMap
 * source) holding a credential-shaped value or a Pulumi secret; the cloud identity of the pod's ServiceAccount (EKS
 * IRSA, GKE Workload Identity) or an EKS Pod Identity association, whatever automountServiceAccountToken says. The
 * pack (a stack) and scan (plain documents together, a stack export) agree.
 */
import { describe, expect, it } from "vitest";
import { scanJson, tempFiles } from "../../scan/helpers";
import { carrier, first, safePodSpec } from "../fixtures";
import { remediateThenValidate, type StackFixture, secret, validateStack, violated } from "../harness";

const RULE = "sandbox-disallow-linked-credentials";
const CM = "kubernetes:core/v1:ConfigMap";
const SA = "kubernetes:core/v1:ServiceAccount";
type Obj = Record<string, unknown>;
const TOKEN = "ghp_8fK2mQ9xL4vN7pR1sT6wY3zB5cD0eF2gH4jK";

const mine = (fixtures: StackFixture[]) =>
  validateStack(fixtures)
    .violations.filter((v) => v.policy === RULE)
    .map((v) => v.message);
const configMap = (data: Obj, name = "app-config", namespace?: string): StackFixture => ({
  type: CM,
  name,
  props: { metadata: { name, ...(namespace === undefined ? {} : { namespace }) }, data },
});
const account = (name: string, annotations: Obj): StackFixture => ({
  type: SA,
  name,
  props: { metadata: { name, annotations } },
});
/** A hardened carrier whose pod spec and task container `edit` changes. */
function task(edit: (spec: Obj, c: Obj) => void, kind = "Deployment", namespace?: string): StackFixture {
  const s = safePodSpec();
  edit(s, first(s));
  const c = carrier(kind);
  const props = c.build(s);
  if (namespace !== undefined) props.metadata = { ...(props.metadata as Obj), namespace };
  return { type: c.type, name: "task", props };
}
const keyRef = (key: string) =>
  task((_, c) => {
    c.env = [{ name: "V", valueFrom: { configMapKeyRef: { name: "app-config", key } } }];
  });
const envFrom = (prefix?: string) =>
  task((_, c) => {
    c.envFrom = [{ configMapRef: { name: "app-config" }, ...(prefix === undefined ? {} : { prefix }) }];
  });
const volume = (source: Obj) =>
  task((s, c) => {
    (s.volumes as Obj[]).push({ name: "cfg", ...source });
    (c.volumeMounts as Obj[]).push({ name: "cfg", mountPath: "/etc/app", readOnly: true });
  });

describe(RULE, () => {
  it("refuses a key ref, envFrom, a configMap volume and a projected source that bring a credential", () => {
    const cm = configMap({
      DB_PASSWORD: "Zq8#mT2!vL9x",
      token: TOKEN,
      "app.conf": "password = Zq8#mT2!vL9xR4\n",
    });
    expect(mine([cm, keyRef("DB_PASSWORD")])).toEqual([
      expect.stringMatching(
        /gets variable V from ConfigMap "app-config" key DB_PASSWORD \(configMapKeyRef\): .*PASSWORD/,
      ),
    ]);
    // Every key, `app.conf` too: the kubelet puts any key without "=" in the environment (relaxed names, 1.32).
    expect(mine([cm, envFrom()])).toHaveLength(3);
    expect(mine([cm, volume({ configMap: { name: "app-config" } })])).toEqual([
      expect.stringMatching(/whose key DB_PASSWORD holds a credential: its name contains "PASSWORD"/),
      expect.stringMatching(
        /mounts ConfigMap "app-config" \(volume "cfg"\), whose key app\.conf holds a credential/,
      ),
      expect.stringMatching(/whose key token holds a credential: .*GitHub token/),
    ]);
    const projected = {
      projected: { sources: [{ configMap: { name: "app-config", items: [{ key: "token", path: "t" }] } }] },
    };
    expect(mine([cm, volume(projected)])).toEqual([
      expect.stringMatching(/whose key token holds a credential/),
    ]);
    for (const m of mine([cm, envFrom()])) expect(m).not.toContain("Zq8#");
  });

  it("passes plain settings, a plain key of a ConfigMap that also holds a credential, and a ConfigMap no pod reads", () => {
    const plain = configMap({ LOG_LEVEL: "debug", MAX_TOKENS: "4096", PASSWORD_MIN_LENGTH: "12" });
    expect(
      violated(validateStack([plain, envFrom(), volume({ configMap: { name: "app-config" } })])),
    ).not.toContain(RULE);
    const mixed = configMap({ LOG_LEVEL: "debug", DB_PASSWORD: "Zq8#mT2!vL9x" });
    expect(mine([mixed, keyRef("LOG_LEVEL")])).toEqual([]);
    expect(mine([mixed, task(() => {})])).toEqual([]);
    // A pod with no namespace may be in the ConfigMap's; one in another namespace reads another ConfigMap.
    expect(mine([configMap({ token: TOKEN }, "app-config", "other"), envFrom()])).toHaveLength(1);
    const elsewhere = task(
      (_, c) => {
        c.envFrom = [{ configMapRef: { name: "app-config" } }];
      },
      "Deployment",
      "team",
    );
    expect(mine([configMap({ token: TOKEN }, "app-config", "other"), elsewhere])).toEqual([]);
  });

  it("reads the envFrom prefix into the variable's name", () => {
    expect(mine([configMap({ PASSWORD: "Zq8#mT2!vL9x" }), envFrom("DB_")])).toEqual([
      expect.stringMatching(/gets variable DB_PASSWORD from ConfigMap "app-config" key PASSWORD/),
    ]);
  });

  it("refuses a Pulumi secret in a ConfigMap the pod reads, sealed by the remediation as the engine runs it", () => {
    const name = "app-config";
    const props = { metadata: { name }, data: { LOG_LEVEL: secret("debug") } };
    remediateThenValidate(CM, props, { name });
    const plain: StackFixture = {
      type: CM,
      name,
      props: { metadata: { name }, data: { LOG_LEVEL: "debug" } },
    };
    expect(mine([plain, envFrom()])).toEqual([
      expect.stringMatching(/key LOG_LEVEL .*: it is a Pulumi secret/),
    ]);
  });

  it("refuses a cloud identity on the pod's ServiceAccount, with automountServiceAccountToken false", () => {
    const pod = task((s) => {
      s.serviceAccountName = "app";
    });
    expect(mine([account("app", { "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x" }), pod])).toEqual([
      expect.stringMatching(
        /ServiceAccount "app", whose annotation eks\.amazonaws\.com\/role-arn: .*whatever automountServiceAccountToken says/,
      ),
    ]);
    expect(
      mine([
        account("default", { "iam.gke.io/gcp-service-account": "a@p.iam.gserviceaccount.com" }),
        task(() => {}),
      ]),
    ).toEqual([expect.stringMatching(/ServiceAccount "default".*GKE Workload Identity/)]);
    const association: StackFixture = {
      type: "aws:eks/podIdentityAssociation:PodIdentityAssociation",
      name: "assoc",
      props: {
        clusterName: "c",
        namespace: "default",
        serviceAccount: "app",
        roleArn: "arn:aws:iam::1:role/x",
      },
    };
    expect(mine([association, pod])).toEqual([expect.stringMatching(/EKS Pod Identity association "assoc"/)]);
    const ack: StackFixture = {
      type: "kubernetes:eks.services.k8s.aws/v1alpha1:PodIdentityAssociation",
      name: "ack",
      props: {
        metadata: { name: "ack" },
        spec: { clusterName: "c", namespace: "default", serviceAccount: "app" },
      },
    };
    expect(mine([ack, pod])).toEqual([expect.stringMatching(/EKS Pod Identity association "ack"/)]);
    const labelled: StackFixture = {
      type: SA,
      name: "app",
      props: { metadata: { name: "app", labels: { "azure.workload.identity/use": "true" } } },
    };
    expect(mine([labelled, pod])).toEqual([
      expect.stringMatching(/whose label azure\.workload\.identity\/use: "true"/),
    ]);
  });

  it("passes a ServiceAccount with unrelated or empty annotations, and an annotated one the pod does not use", () => {
    const pod = task((s) => {
      s.serviceAccountName = "app";
    });
    expect(
      mine([account("app", { "example.com/team": "a", "eks.amazonaws.com/role-arn": "" }), pod]),
    ).toEqual([]);
    expect(mine([account("other", { "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x" }), pod])).toEqual(
      [],
    );
  });

  it("scan judges plain documents together and a stack export as the pack judges the stack", async () => {
    const cm = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "app-config" },
      data: { token: TOKEN },
    };
    const dep = envFrom().props as Obj;
    const manifest = { apiVersion: "apps/v1", kind: "Deployment", ...dep };
    const split = tempFiles({ "cm.json": JSON.stringify(cm), "app.json": JSON.stringify(manifest) });
    const { code, report } = await scanJson(["."], undefined, split);
    expect(code).toBe(1);
    expect(report.findings.filter((f) => f.ruleId === RULE).map((f) => f.resource.kind)).toEqual([
      "Deployment",
    ]);
    const urn = (t: string, n: string) => `urn:pulumi:dev::p::${t}::${n}`;
    const sealed = {
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      ciphertext: "v1:abc",
    };
    const state = {
      version: 3,
      deployment: {
        resources: [
          {
            urn: urn(CM, "app-config"),
            type: CM,
            custom: true,
            inputs: { metadata: { name: "app-config" }, data: { LOG_LEVEL: sealed } },
          },
          {
            urn: urn(carrier("Deployment").type, "task"),
            type: carrier("Deployment").type,
            custom: true,
            inputs: dep,
          },
        ],
      },
    };
    const stack = await scanJson(
      ["state.json"],
      undefined,
      tempFiles({ "state.json": JSON.stringify(state) }),
    );
    expect(stack.report.findings.filter((f) => f.ruleId === RULE).map((f) => f.message)).toEqual([
      expect.stringMatching(/key LOG_LEVEL .*Pulumi secret/),
    ]);
  });
});
