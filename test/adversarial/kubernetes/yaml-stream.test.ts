/**
 * Kubernetes YAML streams read as `kubectl apply -f` reads them (k8s.io/apimachinery and cli-runtime
 * v0.36.3; the kube-stream oracle runs that code, test/policy/sources/kubernetes/yaml-stream.property.test.ts compares with it).
 *
 * - YAMLReader cuts the stream at every line that starts with `---` followed by nothing or a comment once Go's white
 *   space is trimmed: `---#x: y`, `--- # c`, `---\t`, `---` + NBSP are separators (YAML 1.2 reads `---#x: y` as a
 *   key, and one merged mapping). `--- x` and `----` are errors that end kubectl's reading of the stream.
 * - Each piece is read by sigs.k8s.io/yaml, which reads its first YAML document only: a Pod after `...` with no
 *   `---` line is never sent. go-yaml takes a lone CR as a line break: a key after `# comment<CR>` is a key, and a
 *   file with old-Mac line ends is read line by line (but kubectl does not cut it: it is one piece).
 * - The unstructured decoder makes any object with an `items` key a List (`kind: Pod` too) and FlattenListVisitor
 *   sends its items, never the object; kind-less items take the List's kind (`PodList` -> `Pod`) and apiVersion.
 * - apiVersion is read by ParseGroupVersion: `/v1` is core v1; `""` and `apps/` have no version, which kubectl maps
 *   to the group's preferred one; `a/b/c` is refused.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deployment, pod, SAFE_CONTAINER_SECURITY } from "../fixtures";
import { assertVerdict, blocked, cases, describeResult, passes, scanFiles } from "../harness";

const privPod = (name: string, p: { apiVersion?: string } = {}) =>
  pod(name, { ...p, securityContext: `${SAFE_CONTAINER_SECURITY}\nprivileged: true` });
const P = (object: string) => blocked("sandbox-disallow-privileged", object);
const indented = (text: string, by: number) =>
  text
    .trimEnd()
    .split("\n")
    .map((l, i) => (i === 0 ? l : " ".repeat(by) + l))
    .join("\n");
/** `text` as the first item of an `items:` list (column 0). */
const itemsOf = (text: string) => `items:\n  - ${indented(text, 4)}\n`;
/** A Deployment without the `---` and comment lines Helm writes before it. */
const deploymentDoc = (name: string, p: Parameters<typeof deployment>[1]) =>
  deployment(name, p).replace(/^---\n# .*\n/, "");
/** An object's text without its apiVersion and kind lines (a kind-less List item). */
const bare = (text: string) => text.replace(/^apiVersion: .*\nkind: .*\n/, "");

const separators = ["---#x: y", "--- # c", "---#", "---\t", "---\u00a0# c", "---   "];

cases(
  "stream: every line kubectl takes for a separator ends a document",
  separators.map((sep) => ({
    name: `a privileged Pod before a ${JSON.stringify(sep)} line and a safe one`,
    files: { "pods.yaml": `${privPod("evil")}${sep}\n${pod("safe")}` },
    plain: { "pods.yaml": `${privPod("evil")}---\n${pod("safe")}` },
    want: P("evil"),
  })),
);

cases("stream: documents kubectl never sends", [
  {
    // A11: with no `---` line the whole file is one piece, and go-yaml reads its first document only.
    name: "a privileged Pod after `...` with no `---` after it",
    files: { "pods.yaml": `${pod("safe")}...\n${privPod("evil")}` },
    want: passes,
  },
  {
    name: "a privileged Pod after `...` and then `---`",
    files: { "pods.yaml": `${pod("safe")}...\n---\n${privPod("evil")}` },
    want: P("evil"),
  },
  {
    name: "two safe Pods split by `---#x: y`",
    files: { "pods.yaml": `${pod("a")}---#x: y\n${pod("b")}` },
    want: passes,
  },
  {
    // The separator line is dropped whole: what follows a lone CR in it is never read.
    name: "a key after a lone CR on a separator line",
    files: { "pods.yaml": `${pod("a")}--- # c\rhostNetwork: true\n${pod("b")}` },
    want: passes,
  },
]);

cases("stream: lone CR line ends, as go-yaml reads them", [
  {
    name: "privileged after a comment and a lone CR",
    files: {
      "pod.yaml": pod("p").replace(
        "allowPrivilegeEscalation: false",
        "allowPrivilegeEscalation: false # hardened\r        privileged: true",
      ),
    },
    plain: { "pod.yaml": privPod("p") },
    want: P("p"),
  },
  {
    name: "hostNetwork and hostPID after a comment and lone CRs",
    files: {
      "pod.yaml": pod("p").replace(
        "restartPolicy: Never",
        "restartPolicy: Never # one-shot\r  hostNetwork: true\r  hostPID: true",
      ),
    },
    plain: { "pod.yaml": pod("p", { spec: "hostNetwork: true\nhostPID: true" }) },
    want: blocked("sandbox-disallow-host-namespaces", "p"),
  },
  {
    name: "a privileged Pod with old-Mac (CR-only) line ends",
    files: { "pod.yaml": privPod("p").replace(/\n/g, "\r") },
    plain: { "pod.yaml": privPod("p") },
    want: P("p"),
  },
  {
    name: "a safe Pod with CR-only line ends",
    files: { "pod.yaml": pod("p").replace(/\n/g, "\r") },
    want: passes,
  },
]);

cases("Lists: any object with `items` is a List, and kind-less items take its kind", [
  {
    name: "a safe Pod carrying `items` with a privileged Pod",
    files: { "pod.yaml": `${pod("safe")}${itemsOf(privPod("evil"))}` },
    plain: { "pod.yaml": privPod("evil") },
    want: P("evil"),
  },
  {
    name: "a PodList whose item has no apiVersion or kind",
    files: { "list.yaml": `apiVersion: v1\nkind: PodList\n${itemsOf(bare(privPod("evil")))}` },
    plain: { "pod.yaml": privPod("evil") },
    want: P("evil"),
  },
  {
    name: "a DeploymentList whose item has no apiVersion or kind",
    files: {
      "list.yaml": `apiVersion: apps/v1\nkind: DeploymentList\n${itemsOf(bare(deploymentDoc("evil", { spec: "hostNetwork: true" })))}`,
    },
    plain: { "d.yaml": deployment("evil", { spec: "hostNetwork: true" }) },
    want: blocked(undefined, "evil"),
  },
  {
    name: "a safe Pod carrying `items` with a safe Pod",
    files: { "pod.yaml": `${pod("outer")}${itemsOf(pod("inner"))}` },
    want: passes,
  },
  {
    // kubectl sends nothing of it (a List of no items): no finding on the Pod it is not sending.
    name: "a privileged Pod with `items: null`",
    files: { "pod.yaml": `${privPod("evil")}items:\n` },
    want: passes,
  },
]);

cases("apiVersion as ParseGroupVersion reads it", [
  {
    name: "a privileged Pod at apiVersion /v1",
    files: { "pod.yaml": privPod("evil", { apiVersion: "/v1" }) },
    plain: { "pod.yaml": privPod("evil") },
    want: P("evil"),
  },
  {
    name: 'a privileged Pod at apiVersion ""',
    files: { "pod.yaml": privPod("evil", { apiVersion: '""' }) },
    plain: { "pod.yaml": privPod("evil") },
    want: P("evil"),
  },
  {
    name: "a LoadBalancer Service at apiVersion /v1, with --ci",
    files: {
      "svc.yaml":
        "apiVersion: /v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}\n",
    },
    plain: {
      "svc.yaml":
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}\n",
    },
    args: ["--ci"],
    want: blocked("sandbox-disallow-exposed-ports", "web"),
  },
  {
    name: "a hostNetwork Deployment at apiVersion apps/",
    files: { "d.yaml": deployment("evil", { spec: "hostNetwork: true" }).replace("apps/v1", "apps/") },
    plain: { "d.yaml": deployment("evil", { spec: "hostNetwork: true" }) },
    want: blocked("sandbox-disallow-host-namespaces", "evil"),
  },
]);

describe("what kubectl refuses is an input error that names the line and the value", () => {
  it("`--- x` ends kubectl's reading of the stream", async () => {
    const r = await scanFiles({ "pods.yaml": `${pod("a")}--- x\n${privPod("evil")}` });
    expect(r.code, describeResult(r)).toBe(2);
    const e = r.report.errors.find((x) => x.message.includes("invalid Yaml document separator: x"));
    expect(e?.location.line, describeResult(r)).toBe(pod("a").split("\n").length);
  });
  it("an apiVersion with two slashes", async () => {
    const r = await scanFiles({ "pod.yaml": privPod("evil", { apiVersion: "a/b/c" }) });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.report.errors.map((x) => x.message).join("\n")).toMatch(/apiVersion "a\/b\/c" of Pod\/evil/);
  });
  it("an object with `items` that is not a list", async () => {
    const r = await scanFiles({ "pod.yaml": `${privPod("evil")}items: {a: 1}\n` });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.report.errors.map((x) => x.message).join("\n")).toMatch(/`items` is a map, not a list/);
  });
});

/** Separators, line ends and comments, each drawn independently: the verdict is the plain spelling's. */
const spelling = fc.record({
  sep: fc.constantFrom("---", ...separators),
  end: fc.constantFrom("\n", "\r\n"),
  lone: fc.boolean(),
  evilFirst: fc.boolean(),
  bom: fc.boolean(),
});

describe("generated: a stream's verdict does not depend on how kubectl's separators are spelled", () => {
  it("one privileged Pod among safe ones is blocked on it, and safe streams pass", async () => {
    const plainBad = await scanFiles({ "pods.yaml": `${pod("safe")}---\n${privPod("evil")}` });
    assertVerdict(plainBad, P("evil"));
    await fc.assert(
      fc.asyncProperty(spelling, async ({ sep, end, lone, evilFirst, bom }) => {
        // A comment closed by a lone CR before a line that stays a line for go-yaml.
        const spell = (t: string) =>
          (lone ? t.replace("restartPolicy: Never\n", "restartPolicy: Never # c\r") : t).replace(/\n/g, end);
        const docs = evilFirst ? [privPod("evil"), pod("safe")] : [pod("safe"), privPod("evil")];
        const bad = await scanFiles({
          "pods.yaml": `${bom ? "\ufeff" : ""}${docs.map(spell).join(`${sep}${end}`)}`,
        });
        assertVerdict(bad, P("evil"));
        const good = await scanFiles({ "pods.yaml": [pod("a"), pod("b")].map(spell).join(`${sep}${end}`) });
        assertVerdict(good, passes);
      }),
      { seed: 7311, numRuns: 25 },
    );
  });
});
