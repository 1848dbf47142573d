/**
 * sandbox-disallow-weak-runtime-class (stack rule): a RuntimeClass is a name for a node's runtime handler, and the
 * kubelet runs the handler. A class named as a sandboxed runtime (`gvisor`, `runsc`, `kata`, any `gvisor-*` or
 * `kata-*`) that selects a native handler (`runc`, `crun`, `youki`) runs its pods on the host's kernel while a rule
 * or preset that asks for the name is satisfied. `handler` in v1 and v1beta1, `spec.runtimeHandler` in v1alpha1.
 */
import { describe, expect, it } from "vitest";
import { scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type StackFixture, UNKNOWN_WIRE, validateStack, violated } from "../harness";

const RULE = "sandbox-disallow-weak-runtime-class";

function runtimeClass(
  name: string,
  handler: unknown,
  version = "v1",
  metaName: string | null = name,
): StackFixture {
  const where = version === "v1alpha1" ? { spec: { runtimeHandler: handler } } : { handler };
  return {
    type: `kubernetes:node.k8s.io/${version}:RuntimeClass`,
    name,
    props: { ...(metaName === null ? {} : { metadata: { name: metaName } }), ...where },
  };
}
const mine = (fixtures: StackFixture[], config?: object) =>
  validateStack(fixtures, config === undefined ? {} : { [RULE]: config })
    .violations.filter((v) => v.policy === RULE)
    .map((v) => v.message);
const weak = (name: string, handler: string, path = "handler") =>
  `RuntimeClass "${name}" is named as a sandboxed runtime but selects the node's ${handler} handler: its pods run on the host's kernel [${path}]`;

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job, and honest classes", () => {
    const stack: StackFixture[] = [
      { type: DOCKER, name: "c", props: safeContainer() },
      runtimeClass("gvisor", "runsc"),
      runtimeClass("kata", "kata-qemu"),
    ];
    for (const kind of ["Pod", "Deployment", "Job"]) {
      const c = carrier(kind);
      stack.push({
        type: c.type,
        name: kind,
        props: c.build({ ...safePodSpec(), runtimeClassName: "gvisor" }),
      });
    }
    expect(violated(validateStack(stack))).not.toContain(RULE);
  });

  it.each([
    ["gvisor", "runc", "v1"],
    ["runsc", "youki", "v1"],
    ["kata", "crun", "v1"],
    ["gvisor-fast", "runc", "v1"],
    ["kata-qemu", "runc", "v1beta1"],
  ])("refuses RuntimeClass %s selecting %s (%s)", (name, handler, version) => {
    expect(mine([runtimeClass(name, handler, version)])).toEqual([weak(name, handler)]);
  });

  it("reads v1alpha1's spec.runtimeHandler", () => {
    expect(mine([runtimeClass("gvisor", "runc", "v1alpha1")])).toEqual([
      weak("gvisor", "runc", "spec.runtimeHandler"),
    ]);
  });

  it("takes the class's name from metadata.name, else from the resource's name", () => {
    expect(mine([runtimeClass("gvisor", "runc", "v1", null)])).toEqual([weak("gvisor", "runc")]);
    expect(mine([runtimeClass("tasks", "runc", "v1", "gvisor")])).toEqual([weak("gvisor", "runc")]);
  });

  describe("false-deny controls", () => {
    it.each([
      ["a native class on a native handler", runtimeClass("native", "runc")],
      ["a name that only starts like gvisor", runtimeClass("gvisorx", "runc")],
      ["a name that only contains kata", runtimeClass("my-kata", "runc")],
      ["a sandboxed class on its sandboxed handler", runtimeClass("kata-clh", "kata-clh")],
      [
        "a resource named gvisor whose class is named otherwise",
        runtimeClass("gvisor", "runc", "v1", "plain"),
      ],
      [
        "a RuntimeClass kind of another group",
        {
          type: "kubernetes:example.com/v1:RuntimeClass",
          name: "gvisor",
          props: { metadata: { name: "gvisor" }, handler: "runc" },
        },
      ],
      [
        "a v1alpha1 class whose handler is not where v1alpha1 keeps it",
        {
          type: "kubernetes:node.k8s.io/v1alpha1:RuntimeClass",
          name: "gvisor",
          props: { metadata: { name: "gvisor" }, handler: "runc" },
        },
      ],
    ])("passes %s", (_, rc) => {
      expect(mine([rc])).toEqual([]);
    });
  });

  describe("config", () => {
    it("sandboxedNames adds names that claim a sandbox; gvisor-* and kata-* always do", () => {
      expect(mine([runtimeClass("secure", "runc")], { sandboxedNames: ["secure"] })).toEqual([
        weak("secure", "runc"),
      ]);
      expect(mine([runtimeClass("secure", "runc")])).toEqual([]);
      expect(mine([runtimeClass("gvisor-x", "runc")], { sandboxedNames: ["secure"] })).toEqual([
        weak("gvisor-x", "runc"),
      ]);
    });

    it("nativeHandlers names the handlers that run on the host's kernel", () => {
      expect(mine([runtimeClass("gvisor", "runhcs")])).toEqual([]);
      expect(mine([runtimeClass("gvisor", "runhcs")], { nativeHandlers: ["runc", "runhcs"] })).toEqual([
        weak("gvisor", "runhcs"),
      ]);
    });
  });

  it("notes a handler not known until the update", () => {
    const o = validateStack([runtimeClass("gvisor", UNKNOWN_WIRE)]);
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
    expect(o.notes.find((n) => n.policy === RULE)?.message).toContain('the handler of RuntimeClass "gvisor"');
  });

  describe("scan", () => {
    const doc = (name: string, handler: string, apiVersion = "node.k8s.io/v1") =>
      JSON.stringify({ apiVersion, kind: "RuntimeClass", metadata: { name }, handler });
    const podOn = JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "task" },
      spec: { ...safePodSpec(), runtimeClassName: "gvisor" },
    });
    async function found(files: Record<string, string>, args: string[]) {
      const { code, report } = await scanJson(args, undefined, tempFiles(files));
      expect(report.errors).toEqual([]);
      const f = report.findings
        .filter((x) => x.ruleId === RULE)
        .map((x) => `${x.resource.kind}/${x.resource.name}: ${x.message}`);
      return { code, f };
    }

    it("refuses the weak class, on its own and beside a pod that asks for it", async () => {
      expect(await found({ "rc.yaml": doc("gvisor", "runc") }, ["rc.yaml"])).toEqual({
        code: 1,
        f: [`RuntimeClass/gvisor: ${weak("gvisor", "runc")}`],
      });
      const r = await found(
        { "rc.yaml": doc("kata-qemu", "crun", "node.k8s.io/v1beta1"), "pod.yaml": podOn },
        ["."],
      );
      expect(r.f).toEqual([`RuntimeClass/kata-qemu: ${weak("kata-qemu", "crun")}`]);
    });

    it("passes the class that selects gVisor", async () => {
      expect((await found({ "rc.yaml": `${doc("gvisor", "runsc")}\n---\n${podOn}` }, ["rc.yaml"])).f).toEqual(
        [],
      );
    });
  });
});
