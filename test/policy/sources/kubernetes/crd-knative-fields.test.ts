/**
 * Knative Serving's fields (crd-verdicts/knative-serving.ts), each from what its source does: the webhook's pod spec
 * mask (pkg/apis/serving/fieldmask.go), the annotations its autoscaler, revision and route reconcilers read, the
 * ingress visibility of a Route (only the cluster-local label makes it local) and of a DomainMapping (always
 * external). Scan and the pack say the same.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { podSites } from "../../../../policy/sources/kubernetes/carriers";
import { adaptResources } from "../../../../policy/sources/subject";
import { validate } from "../../harness";
import { over, UNJUDGED } from "./crd-conformance";
import { CLUSTER_LOCAL, KNATIVE_HARDENED, revision } from "./crd-hardened-knative";

const EXPOSED = "sandbox-disallow-exposed-ports";
const SERVING = "kubernetes:serving.knative.dev/v1:";

function props(spec: unknown, metadata: object = { labels: CLUSTER_LOCAL }) {
  return { metadata: { name: "hello", namespace: "agents", ...metadata }, spec };
}

function results(type: string, spec: unknown, metadata?: object) {
  return adaptResources(type, props(spec, metadata), "hello").flatMap((v) => judge(v, ALL_RULES, {}));
}

const failing = (type: string, spec: unknown, metadata?: object): string[] => [
  ...new Set(
    results(type, spec, metadata)
      .filter((r) => r.findings.some((f) => !f.unchecked))
      .map((r) => r.rule.id),
  ),
];

/** Where sandbox-disallow-unjudged-fields finds something, by scan and by the pack (the same list). */
function unjudged(type: string, spec: unknown, metadata?: object): string[] {
  const scan = results(type, spec, metadata)
    .filter((r) => r.rule.id === UNJUDGED)
    .flatMap((r) => r.findings.map((f) => `${f.message} [${f.path}]`));
  const pack = validate(type, props(spec, metadata))
    .violations.filter((v) => v.policy === UNJUDGED)
    .map((v) => v.message);
  expect(scan).toEqual(pack);
  return scan.map((m) => m.slice(m.lastIndexOf("[") + 1, -1));
}

const service = (fragment: object = {}) => over(KNATIVE_HARDENED.Service?.(), fragment);
const annotated = (annotations: Record<string, string>, kind = "Service") =>
  over(KNATIVE_HARDENED[kind]?.(), { template: { metadata: { annotations } } });

describe("Knative Serving's fields", () => {
  it("a hardened, cluster-local Service passes scan and the pack", () => {
    expect(failing(`${SERVING}Service`, service())).toEqual([]);
    expect(validate(`${SERVING}Service`, props(service())).violations).toEqual([]);
  });

  it("the carriers read a Service's revision template and a Revision's spec as the pod", () => {
    expect(podSites(`${SERVING}Service`, props(service()))?.map((s) => s.specPath)).toEqual([
      "spec.template.spec",
    ]);
    expect(podSites(`${SERVING}Revision`, props(revision()))?.map((s) => s.specPath)).toEqual(["spec"]);
  });

  it.each([
    ["restartPolicy", "Never"],
    ["nodeName", "node-1"],
    ["terminationGracePeriodSeconds", 5],
    ["ephemeralContainers", [{ name: "debug", image: "busybox" }]],
  ])("%s, outside Knative's pod spec, fails closed where it is written", (key, value) => {
    expect(unjudged(`${SERVING}Service`, service({ template: { spec: { [key]: value } } }))).toEqual([
      `spec.template.spec.${key}`,
    ]);
    expect(unjudged(`${SERVING}Revision`, { ...revision(), [key]: value })).toEqual([`spec.${key}`]);
  });

  it("the pod fields Knative's mask holds keep the pod's verdicts (a pull secret or a toleration passes)", () => {
    const spec = {
      imagePullSecrets: [{ name: "registry" }],
      tolerations: [{ key: "gpu", operator: "Exists" }],
    };
    expect(failing(`${SERVING}Service`, service({ template: { spec } }))).toEqual([]);
    expect(failing(`${SERVING}Revision`, { ...revision(), hostNetwork: true })).toContain(
      "sandbox-disallow-host-namespaces",
    );
  });

  it.each([
    ["autoscaling.knative.dev/class", "scaler.example.com", "kpa.autoscaling.knative.dev"],
    ["queue.sidecar.serving.knative.dev/memory-resource-limit", "64Gi", undefined],
    ["queue.sidecar.serving.knative.dev/resourcePercentage", "90", undefined],
    ["networking.knative.dev/ingress.class", "other.ingress.example.com", undefined],
    ["networking.knative.dev/disable-auto-tls", "true", "false"],
    ["networking.knative.dev/http-protocol", "enabled", "redirected"],
    ["features.knative.dev/unknown-feature", "enabled", undefined],
    ["serving.knative.dev/not-a-key", "x", undefined],
  ])("the annotation %s: %s fails closed on the object and on its revision template", (key, bad, good) => {
    const type = `${SERVING}Service`;
    expect(unjudged(type, annotated({ [key]: bad }))).toEqual([`spec.template.metadata.annotations.${key}`]);
    expect(unjudged(type, service(), { labels: CLUSTER_LOCAL, annotations: { [key]: bad } })).toEqual([
      `metadata.annotations.${key}`,
    ]);
    expect(unjudged(`${SERVING}Configuration`, annotated({ [key]: bad }, "Configuration"))).toEqual([
      `spec.template.metadata.annotations.${key}`,
    ]);
    if (good !== undefined) expect(failing(type, annotated({ [key]: good }))).toEqual([]);
  });

  it("scaling, rollout and feature annotations Knative reads, and any other domain's keys, pass", () => {
    const notes = {
      "autoscaling.knative.dev/min-scale": "1",
      "autoscaling.knative.dev/maxScale": "5",
      "autoscaling.knative.dev/target": "50",
      "autoscaling.knative.dev/window": "60s",
      "serving.knative.dev/rollout-duration": "120s",
      "features.knative.dev/http-full-duplex": "Enabled",
      "networking.knative.dev/certificate.class": "cert-manager.certificate.networking.knative.dev",
      "example.com/owner": "team-a",
    };
    expect(failing(`${SERVING}Service`, annotated(notes))).toEqual([]);
    expect(failing(`${SERVING}Service`, service(), { labels: CLUSTER_LOCAL, annotations: notes })).toEqual(
      [],
    );
  });

  it("a Revision's own labels and annotations go onto its pods: a mesh injector there fails", () => {
    const meta = { annotations: { "sidecar.istio.io/inject": "true" } };
    expect(unjudged(`${SERVING}Revision`, revision(), meta)).toEqual([
      "metadata.annotations.sidecar.istio.io/inject",
    ]);
  });

  it("a Service or Route is public without the cluster-local label; a DomainMapping always is", () => {
    expect(failing(`${SERVING}Service`, service(), {})).toEqual([EXPOSED]);
    expect(
      failing(`${SERVING}Service`, service(), { labels: { "networking.knative.dev/visibility": "public" } }),
    ).toEqual([EXPOSED]);
    expect(failing(`${SERVING}Route`, KNATIVE_HARDENED.Route?.())).toEqual([]);
    expect(failing(`${SERVING}Route`, KNATIVE_HARDENED.Route?.(), {})).toEqual([EXPOSED]);
    const mapping = "kubernetes:serving.knative.dev/v1beta1:DomainMapping";
    expect(failing(mapping, KNATIVE_HARDENED.DomainMapping?.())).toEqual([EXPOSED]);
    expect(
      validate(mapping, props(KNATIVE_HARDENED.DomainMapping?.())).violations.map((v) => v.policy),
    ).toEqual([EXPOSED]);
  });
});
