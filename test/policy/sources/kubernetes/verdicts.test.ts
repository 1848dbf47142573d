/**
 * Conformance of the pod spec verdict table with the generated schema (core/v1 PodSpec and ObjectMeta of the
 * claimed Kubernetes version): every field has a verdict; every verdict names a field the schema has and rules that
 * exist; a judged field's hostile fragment, laid over a hardened pod, is refused by one of its rules (and its control
 * passes them); a field outside the schema, in any spelling the API server does not read as a field, fails closed.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { fieldPaths } from "../../../../policy/sources/docker/shape";
import { OBJECT_META, POD_SPEC } from "../../../../policy/sources/kubernetes/schema.generated";
import { OBJECT_META_VERDICTS, POD_SPEC_VERDICTS } from "../../../../policy/sources/kubernetes/verdicts";
import { adaptResources } from "../../../../policy/sources/subject";
import type { VerdictTable } from "../../../../policy/sources/verdict";
import { verdictFor } from "../../../../policy/sources/verdict";
import { safePodSpec } from "../../fixtures";

const UNJUDGED = "sandbox-disallow-unjudged-fields";
const META = { name: "t", labels: { "sandbox.project": "demo", "sandbox.role": "task" } };

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `b` laid over `a`: objects merged key by key, lists element by element, anything else replaced. */
function over(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return b.map((x, i) => over(a[i], x));
  if (!isObj(a) || !isObj(b)) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = over(a[k], v);
  return out;
}

function pod(spec: unknown, meta: unknown = META) {
  return { apiVersion: "v1", kind: "Pod", metadata: meta, spec };
}

function failing(props: unknown, config: Readonly<Record<string, object>> = {}): string[] {
  return adaptResources("kubernetes:core/v1:Pod", props, "t").flatMap((v) =>
    judge(v, ALL_RULES, config)
      .filter((r) => r.findings.some((f) => !f.unchecked))
      .map((r) => r.rule.id),
  );
}

function findings(props: unknown): { path?: string; message: string }[] {
  return adaptResources("kubernetes:core/v1:Pod", props, "t").flatMap((v) =>
    judge(v, ALL_RULES, {})
      .filter((r) => r.rule.id === UNJUDGED)
      .flatMap((r) => r.findings.map((f) => ({ path: f.path, message: f.message }))),
  );
}

function conformance(name: string, table: VerdictTable, shape: Parameters<typeof fieldPaths>[0]) {
  describe(`the ${name} verdict table`, () => {
    const paths = fieldPaths(shape);
    it("gives every field of the claimed schema a verdict", () => {
      expect(paths.length).toBeGreaterThan(name === "PodSpec" ? 1000 : 20);
      expect(paths.filter((p) => verdictFor(table, p) === undefined)).toEqual([]);
    });

    it("names only fields the schema has, and rules that exist", () => {
      const ids = new Set(ALL_RULES.map((r) => r.id));
      for (const [k, v] of Object.entries(table)) {
        expect(paths, k).toContain(k);
        if (v.v === "judged") for (const r of v.rules) expect(ids.has(r), `${k}: ${r}`).toBe(true);
      }
    });
  });
}

conformance("PodSpec", POD_SPEC_VERDICTS, POD_SPEC);
conformance("ObjectMeta", OBJECT_META_VERDICTS, OBJECT_META);

describe("judged pod spec fields", () => {
  it("the hardened pod passes every rule", () => {
    expect(failing(pod(safePodSpec()))).toEqual([]);
  });

  const judgedEntries = (table: VerdictTable) =>
    Object.entries(table).flatMap(([k, v]) => (v.v === "judged" ? [[k, v] as const] : []));

  it.each(judgedEntries(POD_SPEC_VERDICTS))("%s: its hostile value is refused by its rules", (_, v) => {
    if (v.v !== "judged") return;
    const hit = failing(pod(over(safePodSpec(), v.hostile)), v.config);
    expect(hit.filter((r) => v.rules.includes(r)).length, JSON.stringify(hit)).toBeGreaterThan(0);
    if (v.control !== undefined) {
      const ok = failing(pod(over(safePodSpec(), v.control)), v.config);
      expect(ok.filter((r) => v.rules.includes(r))).toEqual([]);
    }
  });

  it.each(judgedEntries(OBJECT_META_VERDICTS))("metadata %s: its hostile value is refused", (_, v) => {
    if (v.v !== "judged") return;
    const hit = failing(pod(safePodSpec(), over(META, v.hostile)), v.config);
    expect(hit.filter((r) => v.rules.includes(r)).length, JSON.stringify(hit)).toBeGreaterThan(0);
  });
});

describe("fields outside the claimed schema fail closed, where they are written", () => {
  it.each([
    ["a field a newer server may have", { hostSomething: true }, "spec.hostSomething"],
    ["a field in another case (the server reads names exactly)", { HostNetwork: true }, "spec.HostNetwork"],
    [
      "a container field outside the schema",
      { containers: [{ securityContext: { privilegedMode: true } }] },
      "spec.containers[0].securityContext.privilegedMode",
    ],
    [
      "a volume source outside the schema",
      { volumes: [{ name: "x", hostDir: { path: "/" } }] },
      "spec.volumes[0].hostDir",
    ],
  ])("%s", (_, fragment, path) => {
    const f = findings(pod(over(safePodSpec(), fragment)));
    expect(f.map((x) => x.path)).toEqual([path]);
    expect(f[0]?.message).toContain("Kubernetes 1.36");
  });

  it("a template's metadata outside ObjectMeta fails; label and annotation keys are data", () => {
    const f = findings(pod(safePodSpec(), { ...META, annotation: { a: "b" }, labels: { anyKey: "v" } }));
    expect(f.map((x) => x.path)).toEqual(["metadata.annotation"]);
  });

  it("in a Deployment's template too, and the rule's allowFields accepts a named field", () => {
    const props = {
      metadata: { name: "d" },
      spec: { replicas: 1, template: { metadata: META, spec: over(safePodSpec(), { newField: 1 }) } },
    };
    const views = adaptResources("kubernetes:apps/v1:Deployment", props, "d");
    const rule = ALL_RULES.find((r) => r.id === UNJUDGED);
    if (rule === undefined) throw new Error("no rule");
    const hit = views.flatMap((v) => judge(v, [rule], {}).flatMap((r) => r.findings.map((x) => x.path)));
    expect(hit).toEqual(["spec.template.spec.newField"]);
    const allowed = views.flatMap((v) =>
      judge(v, [rule], { [UNJUDGED]: { allowFields: ["PodSpec.newField"] } }).flatMap((r) => r.findings),
    );
    expect(allowed).toEqual([]);
  });

  it("an operator's pod template is its own CRD's schema: extra fields there are not PodSpec's", () => {
    const props = {
      spec: { template: { spec: over(safePodSpec(), { containerConcurrency: 1, timeoutSeconds: 30 }) } },
    };
    const views = adaptResources("kubernetes:serving.knative.dev/v1:Configuration", props, "k");
    expect(views.flatMap((v) => (v.subject === "workload" ? (v.unjudgedFields ?? []) : []))).toEqual([]);
  });
});
