/**
 * Conformance of the operators' verdict tables (crd-verdicts/) with their pinned CRD schemas (crds.generated.ts):
 * every field of every pinned kind and version has a verdict; every verdict names a field some version has, and
 * rules that exist; a pod template or pod spec judged by the pod rules is one the carriers really read (derived
 * from carriers.ts, not trusted); a core Kubernetes value no rule reads is refused; a judged field's hostile
 * fragment, laid over a hardened object of its kind, is refused by one of its rules (and its control passes); a
 * hardened object of every kind and version passes every rule; and a key outside the pinned schema fails closed
 * where it is written.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { podSites } from "../../../../policy/sources/kubernetes/carriers";
import { CRD_VERDICTS } from "../../../../policy/sources/kubernetes/crd-fields";
import { kindVerdict } from "../../../../policy/sources/kubernetes/kinds";
import { POD_SPEC_VERDICTS } from "../../../../policy/sources/kubernetes/verdicts";
import { adaptResources } from "../../../../policy/sources/subject";
import { verdictFor } from "../../../../policy/sources/verdict";
import { safePodSpec } from "../../fixtures";
import { validate } from "../../harness";
import {
  BY_DESIGN,
  failing,
  fieldShapes,
  HARDENED,
  KINDS,
  leaf,
  object,
  over,
  placed,
  pod,
  rayCluster,
  UNJUDGED,
  unjudged,
} from "./crd-conformance";

describe.each(KINDS)("$operator $kind", (k) => {
  const table = CRD_VERDICTS[k.operator];
  const byVersion = Object.entries(k.versions).map(([v, s]) => [v, fieldShapes(s)] as const);
  const all = new Set(byVersion.flatMap(([, f]) => f.map(([p]) => p)));

  it("has a kind verdict that lets a hardened object through", () => {
    // A KEDA ScaledObject is judged with its set (its target, the budget): a stack verdict.
    for (const version of Object.keys(k.versions))
      expect(["read", "through", "stack"]).toContain(
        kindVerdict({ group: k.group, version, kind: k.kind })?.v,
      );
  });

  it("gives every field of every pinned version a verdict", () => {
    expect(all.size).toBeGreaterThan(0);
    expect([...all].filter((p) => verdictFor(table, `${k.kind}.${p}`) === undefined)).toEqual([]);
  });

  it("a hardened object of every version passes every rule", () => {
    const hardened = HARDENED[k.kind];
    expect(hardened, `no hardened ${k.kind}`).toBeDefined();
    for (const version of Object.keys(k.versions))
      expect(failing(k, version, hardened?.(version)), `${k.kind} ${version}`).toEqual([]);
  });

  it("judges a pod template or pod spec by the pod rules only where the carriers read it", () => {
    for (const [version, fields] of byVersion)
      for (const [p, s] of fields) {
        const l = leaf(s);
        // Where each carries the pod spec, and a hardened value of it.
        const carried: Record<string, [string, () => object]> = {
          "core/v1.PodSpec": ["", safePodSpec],
          "core/v1.PodTemplateSpec": [".spec", pod],
          "batch/v1.JobTemplateSpec": [".spec.template.spec", () => ({ spec: { template: pod() } })],
          "batch/v1.JobSpec": [".template.spec", () => ({ template: pod() })],
        };
        const c = l.k === "core" && Object.hasOwn(carried, l.type) ? carried[l.type] : undefined;
        if (l.k !== "core" || c === undefined) continue;
        const v = verdictFor(table, `${k.kind}.${p}`);
        const concrete = `spec.${p.replace(/\[\]/g, "[0]")}`;
        const value = c[1]();
        const sites = podSites(
          `kubernetes:${k.group}/${version}:${k.kind}`,
          object(
            k,
            version,
            over(HARDENED[k.kind]?.(version), (placed(p, value) as Record<string, unknown>) ?? {}),
          ),
        );
        const specPath = `${concrete}${c[0]}`;
        // A rebuilt pod (remap) reads the template it starts from when its spec maps back there.
        const read = (sites ?? []).some(
          (site) => site.specPath === specPath || site.remap?.(site.specPath) === specPath,
        );
        expect({ path: p, version, read, verdict: v?.v }).toEqual({
          path: p,
          version,
          read: v?.v === "judged",
          verdict: read ? "judged" : "refused",
        });
      }
  });

  it("refuses every core Kubernetes value no rule reads", () => {
    for (const [version, fields] of byVersion)
      for (const [p, s] of fields) {
        const l = leaf(s);
        // Values of a single JSON scalar (a time, a number or a name) carry nothing a rule could read.
        if (l.k !== "core" || ["meta/v1.Time", "meta/v1.Duration", "intstr.IntOrString"].includes(l.type))
          continue;
        // A pod spec written inline (Knative's RevisionSpec) that the carriers read as the pod keeps the pod's own
        // verdicts: the pod rules read it there as they do in a Deployment.
        const v = verdictFor(table, `${k.kind}.${p}`);
        const inline = p.includes(".") ? `spec.${p.slice(0, p.lastIndexOf("."))}` : "spec";
        if (
          v !== undefined &&
          Object.values(POD_SPEC_VERDICTS).includes(v) &&
          (
            podSites(
              `kubernetes:${k.group}/${version}:${k.kind}`,
              object(k, version, HARDENED[k.kind]?.(version)),
            ) ?? []
          ).some((site) => site.specPath === inline)
        )
          continue;
        expect({ path: p, verdict: verdictFor(table, `${k.kind}.${p}`)?.v }).not.toEqual({
          path: p,
          verdict: "inert",
        });
      }
  });

  it("names only fields a pinned version has, and rules that exist", () => {
    const ids = new Set(ALL_RULES.map((r) => r.id));
    // A refused field inside a core value the claimed tables do not hold (a head Service's metadata.annotations).
    const cores = byVersion.flatMap(([, f]) => f.filter(([, s]) => leaf(s).k === "core").map(([p]) => p));
    for (const [key, v] of Object.entries(table)) {
      if (!key.startsWith(`${k.kind}.`)) continue;
      const path = key.slice(k.kind.length + 1);
      if (v.v === "refused" && cores.some((c) => path.startsWith(`${c}.`))) continue;
      expect(all, key).toContain(path);
      if (v.v === "judged") for (const r of v.rules) expect(ids.has(r), `${key}: ${r}`).toBe(true);
    }
  });

  const judgedFields = Object.entries(table).filter(
    ([key, v]) => key.startsWith(`${k.kind}.`) && v.v === "judged",
  );
  it.each(judgedFields)("%s: its hostile fragment is refused by its rules", (key, v) => {
    if (v.v !== "judged") return;
    const path = key.slice(k.kind.length + 1);
    for (const [version, fields] of byVersion) {
      if (!fields.some(([p]) => p === path)) continue;
      const hit = failing(k, version, over(HARDENED[k.kind]?.(version), v.hostile), v.config);
      expect(
        hit.filter((r) => v.rules.includes(r)).length,
        `${version}: ${JSON.stringify(hit)}`,
      ).toBeGreaterThan(0);
      if (v.control !== undefined)
        expect(failing(k, version, over(HARDENED[k.kind]?.(version), v.control), v.config), version).toEqual(
          [],
        );
    }
  });

  it("a key outside the pinned schema fails closed where it is written, in any case", () => {
    const [version] = Object.keys(k.versions);
    if (version === undefined) return;
    const hardened = HARDENED[k.kind]?.(version) ?? {};
    const first = Object.keys(hardened)[0] ?? "x";
    // A sidecar list where the kind has none (a Tekton Task has one: its misspelling there).
    const shape = k.versions[version];
    const own = shape?.k === "struct" && Object.hasOwn(shape.fields, "sidecars");
    for (const key of [
      own ? "sideCars" : "sidecars",
      first.toUpperCase(),
      `${first.charAt(0).toUpperCase()}${first.slice(1)}`,
    ]) {
      const f = unjudged(k, version, { ...hardened, [key]: [{ name: "x" }] });
      expect(f.map((x) => x.path)).toEqual([`spec.${key}`]);
      expect(f[0]?.message).toContain(`not a field of ${k.kind} in`);
    }
  });

  it("a version the pinned release does not serve fails closed at apiVersion", () => {
    const f = unjudged(k, "v9", HARDENED[k.kind]?.("v9"));
    expect(f.map((x) => x.path)).toEqual(["apiVersion"]);
  });
});

describe("the pack judges the operators' fields as scan does", () => {
  it.each([
    [
      "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxClaim",
      { warmPoolRef: { name: "p" }, env: [{ name: "A", value: "b" }] },
      "spec.env",
    ],
    [
      "kubernetes:ray.io/v1:RayCluster",
      { ...rayCluster(), authOptions: { mode: "token" } },
      "spec.authOptions",
    ],
    ["kubernetes:agents.x-k8s.io/v1alpha1:Sandbox", { podTemplate: pod() }, "apiVersion"],
  ])("%s", (type, spec, path) => {
    const props = { metadata: { name: "t", namespace: "agents" }, spec };
    const pack = validate(type, props).violations.filter((v) => v.policy === UNJUDGED);
    expect(pack.map((v) => v.message.startsWith(`${path} is not allowed`))).toEqual([true]);
    const scan = adaptResources(type, props, "fixture").flatMap((v) =>
      judge(v, ALL_RULES, {})
        .filter((r) => r.rule.id === UNJUDGED)
        .flatMap((r) => r.findings.map((f) => `${f.message} [${f.path}]`)),
    );
    // The pack renders the path after the message.
    expect(scan).toEqual(pack.map((v) => v.message));
  });

  it("a hardened object of each pinned kind passes the pack", () => {
    for (const k of KINDS) {
      const [version] = Object.keys(k.versions);
      const props = object(k, version ?? "", HARDENED[k.kind]?.(version ?? ""));
      const violations = validate(`kubernetes:${k.group}/${version}:${k.kind}`, props).violations;
      expect(
        violations.filter((v) => !(BY_DESIGN[k.kind] ?? []).includes(v.policy)),
        k.kind,
      ).toEqual([]);
    }
  });
});
