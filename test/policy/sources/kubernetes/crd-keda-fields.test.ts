/**
 * KEDA's pinned fields (crd-verdicts/keda.ts) as the operator uses them (github.com/kedacore/keda/v2
 * pkg/scaling/scalers_builder.go, pkg/scaling/executor, pkg/scaling/resolver): triggers that make the operator send
 * a request outside the cluster and every credential source fail closed where they are written, quiet triggers
 * pass; a ScaledJob's Jobs are judged as a Job's pods and priced at its most Jobs times their parallelism; a
 * ScaledObject's target must be in the set, and is priced at the ScaledObject's most replicas; scan and the pack
 * agree.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { adaptResources } from "../../../../policy/sources/subject";
import { autoscaledReplicas } from "../../../../policy/stack/autoscalers";
import { checkReferences } from "../../../../policy/stack/disallow-unjudged-references";
import type { StackResource } from "../../../../policy/stack/types";
import { isUnknown, UNKNOWN } from "../../../../policy/workload";
import { validate } from "../../harness";
import { KEDA_HARDENED } from "./crd-hardened-keda";
import { over, pod } from "./crd-hardened-rollouts";

const UNJUDGED = "sandbox-disallow-unjudged-fields";
const type = (kind: string) => `kubernetes:keda.sh/v1alpha1:${kind}`;
const hardened = (kind: string) => KEDA_HARDENED[kind]?.("v1alpha1") ?? {};
const props = (spec: unknown, metadata: object = {}) => ({
  metadata: { name: "web", namespace: "agents", ...metadata },
  spec,
});

/** The paths the unjudged-fields rule names, and every rule that fails. */
function judgeObject(kind: string, spec: unknown, metadata: object = {}) {
  const results = adaptResources(type(kind), props(spec, metadata), "t").flatMap((v) =>
    judge(v, ALL_RULES, {}),
  );
  return {
    paths: results.filter((r) => r.rule.id === UNJUDGED).flatMap((r) => r.findings.map((f) => f.path)),
    messages: results.filter((r) => r.rule.id === UNJUDGED).flatMap((r) => r.findings.map((f) => f.message)),
    rules: [...new Set(results.filter((r) => r.findings.some((f) => !f.unchecked)).map((r) => r.rule.id))],
  };
}

const workload = (spec: unknown) => {
  const w = adaptResources(type("ScaledJob"), props(spec), "t").find((v) => v.subject === "workload");
  if (w?.subject !== "workload") throw new Error("no workload view");
  return w;
};

describe("KEDA triggers", () => {
  it.each(["ScaledJob", "ScaledObject"])("a hardened %s passes every rule", (kind) => {
    expect(judgeObject(kind, hardened(kind)).rules).toEqual([]);
  });

  it.each([
    ["cpu", { value: "60" }],
    ["memory", { value: "80" }],
    ["cron", { timezone: "UTC", start: "0 * * * *", end: "30 * * * *", desiredReplicas: "2" }],
    ["kubernetes-workload", { podSelector: "app=web", value: "2" }],
  ])("a %s trigger queries nothing outside the cluster: it passes", (t, metadata) => {
    for (const kind of ["ScaledJob", "ScaledObject"])
      expect(judgeObject(kind, { ...hardened(kind), triggers: [{ type: t, metadata }] }).rules).toEqual([]);
  });

  it.each([
    ["prometheus", { serverAddress: "http://198.51.100.7:9090", query: "up", threshold: "1" }],
    ["metrics-api", { url: "https://203.0.113.9/q", valueLocation: "v", targetValue: "1" }],
    ["external", { scalerAddress: "scaler.example:9090" }],
    ["external-push", { scalerAddress: "scaler.example:9090" }],
    ["kubernetes-resource", { resourceKind: "Secret", resourceName: "db", key: "n", targetValue: "1" }],
    ["CPU", { value: "60" }],
  ])("a %s trigger fails closed at its type, saying the operator sends the request", (t, metadata) => {
    for (const kind of ["ScaledJob", "ScaledObject"]) {
      const f = judgeObject(kind, { ...hardened(kind), triggers: [{ type: t, metadata }] });
      expect(f.paths).toEqual(["spec.triggers[0].type"]);
      expect(f.messages[0]).toContain("outside the sandbox's egress walls");
    }
  });

  it("a trigger's authenticationRef fails closed: the operator hands the credentials to its scaler", () => {
    const f = judgeObject(
      "ScaledObject",
      over(hardened("ScaledObject"), { triggers: [{ authenticationRef: { name: "creds" } }] }),
    );
    expect(f.paths).toEqual(["spec.triggers[0].authenticationRef"]);
  });

  it("an HPA behavior of the claimed shape passes; a key outside it fails closed", () => {
    const behavior = (b: object) => ({
      ...hardened("ScaledObject"),
      advanced: { horizontalPodAutoscalerConfig: { behavior: b } },
    });
    expect(
      judgeObject("ScaledObject", behavior({ scaleUp: { selectPolicy: "Max", tolerance: "0.1" } })).paths,
    ).toEqual([]);
    expect(judgeObject("ScaledObject", behavior({ scaleUp: { maxReplicas: 1000 } })).paths).toEqual([
      "spec.advanced.horizontalPodAutoscalerConfig.behavior",
    ]);
  });
});

describe("KEDA authentications: every credential source is refused", () => {
  const sources: [string, unknown][] = [
    ["podIdentity", { provider: "azure-workload" }],
    ["secretTargetRef", [{ parameter: "password", name: "db", key: "password" }]],
    ["configMapTargetRef", [{ parameter: "host", name: "db", key: "host" }]],
    ["env", [{ parameter: "password", name: "DB_PASSWORD" }]],
    ["filePath", "/var/run/creds.json"],
    ["hashiCorpVault", { address: "https://vault.example", authentication: "token" }],
    ["azureKeyVault", { vaultUri: "https://kv.example" }],
    ["gcpSecretManager", { secrets: [{ parameter: "p", id: "s" }] }],
    ["awsSecretManager", { secrets: [{ parameter: "p", name: "s" }] }],
    ["boundServiceAccountToken", [{ parameter: "token", serviceAccountName: "admin" }]],
    ["oauth2", { type: "clientCredentials", tokenUrl: "https://idp.example/token" }],
    ["azureServicePrincipal", { tenantId: "t", clientId: "c" }],
  ];
  it.each(["TriggerAuthentication", "ClusterTriggerAuthentication"])("%s", (kind) => {
    expect(judgeObject(kind, {}).rules).toEqual([]);
    for (const [key, value] of sources) {
      const f = judgeObject(kind, { [key]: value });
      expect(f.paths, key).toEqual([`spec.${key}`]);
      expect(f.messages[0], key).toContain("a credential injected where no rule reads it");
    }
  });
});

describe("a ScaledJob's pods", () => {
  it("a privileged container in jobTargetRef fails as in a Job, where it is written", () => {
    const spec = over(hardened("ScaledJob"), {
      jobTargetRef: { template: { spec: { containers: [{ securityContext: { privileged: true } }] } } },
    });
    const results = adaptResources(type("ScaledJob"), props(spec), "t").flatMap((v) =>
      judge(v, ALL_RULES, {}),
    );
    const privileged = results.find((r) => r.rule.id === "sandbox-disallow-privileged");
    expect(privileged?.findings.map((f) => f.path)).toEqual([
      "spec.jobTargetRef.template.spec.containers[0]",
    ]);
  });

  it("an unset restartPolicy is OnFailure, as the operator sets it; a written one is kept", () => {
    const unset = over(hardened("ScaledJob"), {
      jobTargetRef: { template: { spec: { restartPolicy: "" } } },
    });
    expect(workload(unset).lifecycle.restart).toBe("on-failure");
    expect(workload(hardened("ScaledJob")).lifecycle.restart).toBe("never");
  });

  it("its copies are its most Jobs (100 when unset, minReplicaCount when more) times their parallelism", () => {
    const base = hardened("ScaledJob") as Record<string, unknown>;
    const job = base.jobTargetRef as object;
    expect(workload(base).replicas).toBe(2);
    expect(workload({ ...base, maxReplicaCount: undefined }).replicas).toBe(100);
    expect(
      workload({ ...base, maxReplicaCount: 1000, jobTargetRef: { ...job, parallelism: 3 } }).replicas,
    ).toBe(3000);
    expect(workload({ ...base, minReplicaCount: 7 }).replicas).toBe(7);
    expect(workload({ ...base, maxReplicaCount: 0 }).replicas).toBe(0);
    expect(isUnknown(workload({ ...base, maxReplicaCount: UNKNOWN }).replicas)).toBe(true);
  });
});

describe("a ScaledObject's target", () => {
  interface Item {
    readonly type: string;
    readonly name: string;
    readonly urn: string;
    readonly props: unknown;
  }
  const so = (spec: object, metadata: object = {}): Item => ({
    type: type("ScaledObject"),
    name: "so",
    urn: "u/so",
    props: props(over(hardened("ScaledObject"), spec), metadata),
  });
  const target = (kind = "Deployment", group = "apps"): Item => ({
    type: `kubernetes:${group}/v1:${kind}`,
    name: "web",
    urn: `u/${kind}`,
    props: { metadata: { name: "web", namespace: "agents" }, spec: { replicas: 1, template: pod() } },
  });
  const refs = (...rs: Item[]) => checkReferences(rs).map((f) => `${f.path ?? ""} ${f.message}`);

  it("must be in the set: absent, it fails closed; present, it passes", () => {
    expect(refs(so({}))).toEqual([
      expect.stringContaining('scales Deployment "web", which is not in the input'),
    ]);
    expect(refs(so({}), target())).toEqual([]);
    // apiVersion and kind unset: an apps/v1 Deployment.
    expect(refs(so({ scaleTargetRef: { apiVersion: "", kind: "" } }), target())).toEqual([]);
  });

  it("a StatefulSet or an Argo Rollout answers; a kind the budget does not price by replicas fails closed", () => {
    expect(refs(so({ scaleTargetRef: { kind: "StatefulSet" } }), target("StatefulSet"))).toEqual([]);
    expect(
      refs(
        so({ scaleTargetRef: { apiVersion: "argoproj.io/v1alpha1", kind: "Rollout" } }),
        target("Rollout", "argoproj.io"),
      ),
    ).toEqual([]);
    for (const ref of [
      { kind: "DaemonSet" },
      { kind: "deployment" },
      { apiVersion: "example.com/v1", kind: "Deployment" },
    ])
      expect(refs(so({ scaleTargetRef: ref }), target()), JSON.stringify(ref)).toEqual([
        expect.stringContaining("spec.scaleTargetRef ScaledObject"),
      ]);
  });

  const res = (item: Item): StackResource => ({
    ...item,
    subject: undefined,
    additionalSecretOutputs: [],
    propertyDependencies: {},
  });
  const most = (spec: object, metadata: object = {}) =>
    autoscaledReplicas([res(so(spec, metadata))], () => "agents").get("agents/Deployment/web");

  it("is priced at the most of maxReplicaCount (100 when unset), minReplicaCount and paused-replicas", () => {
    expect(most({})).toBe(3);
    expect(most({ maxReplicaCount: null })).toBe(100);
    expect(most({ maxReplicaCount: 1000 })).toBe(1000);
    expect(most({}, { annotations: { "autoscaling.keda.sh/paused-replicas": "500" } })).toBe(500);
    expect(isUnknown(most({ maxReplicaCount: UNKNOWN }))).toBe(true);
  });
});

describe("the pack judges KEDA's fields as scan does", () => {
  it.each([
    [
      "ScaledJob",
      { ...hardened("ScaledJob"), triggers: [{ type: "prometheus", metadata: {} }] },
      "spec.triggers[0].type",
    ],
    [
      "TriggerAuthentication",
      { secretTargetRef: [{ parameter: "p", name: "s", key: "k" }] },
      "spec.secretTargetRef",
    ],
  ])("%s", (kind, spec, path) => {
    const p = props(spec);
    const pack = validate(type(kind), p).violations.filter((v) => v.policy === UNJUDGED);
    expect(pack.map((v) => v.message.startsWith(`${path} is not allowed`))).toEqual([true]);
    const scan = adaptResources(type(kind), p, "fixture").flatMap((v) =>
      judge(v, ALL_RULES, {})
        .filter((r) => r.rule.id === UNJUDGED)
        .flatMap((r) => r.findings.map((f) => `${f.message} [${f.path}]`)),
    );
    expect(scan).toEqual(pack.map((v) => v.message));
  });
});
