// A RuntimeClass is judged by the handler it selects, as the kubelet runs it: a class named as a sandboxed runtime
// that selects a native handler fails, in the pack (stack validation) and in scan (documents scanned together),
// in every served version's field, and a secret or unknown handler fails closed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanFiles } from "../adversarial/harness";
import { type StackFixture, secret, UNKNOWN_WIRE, validateStack } from "./harness";

const RULE = "sandbox-disallow-weak-runtime-class";

function runtimeClass(version: string, name: string, handler: unknown): StackFixture {
  const props: Record<string, unknown> = {
    apiVersion: `node.k8s.io/${version}`,
    kind: "RuntimeClass",
    metadata: { name },
  };
  if (version === "v1alpha1") props.spec = { runtimeHandler: handler };
  else props.handler = handler;
  return { type: `kubernetes:node.k8s.io/${version}:RuntimeClass`, name, props };
}

function packVerdict(f: StackFixture): string[] {
  return validateStack([f])
    .violations.filter((v) => v.policy === RULE)
    .map((v) => v.message);
}

function yamlOf(version: string, name: string, handler: string): string {
  const body = version === "v1alpha1" ? `spec:\n  runtimeHandler: ${handler}` : `handler: ${handler}`;
  return `apiVersion: node.k8s.io/${version}\nkind: RuntimeClass\nmetadata:\n  name: ${name}\n${body}\n`;
}

async function scanVerdict(version: string, name: string, handler: string): Promise<string[]> {
  const r = await scanFiles({ "rc.yaml": yamlOf(version, name, handler) });
  return r.report.findings.filter((f) => f.ruleId === RULE).map((f) => f.message);
}

describe(RULE, () => {
  it("fails a sandboxed name that selects a native handler, in every version, in the pack and in scan", async () => {
    const versions = fc.constantFrom("v1", "v1beta1", "v1alpha1");
    const names = fc.constantFrom("gvisor", "runsc", "kata", "kata-qemu", "gvisor-systrap");
    const handlers = fc.constantFrom("runc", "crun", "youki");
    await fc.assert(
      fc.asyncProperty(versions, names, handlers, async (v, n, h) => {
        const pack = packVerdict(runtimeClass(v, n, h));
        expect(pack).toHaveLength(1);
        expect(pack[0]).toContain(`RuntimeClass "${n}"`);
        // Quoted or plain, the YAML scalar is the same string to the API server.
        const quoted = await scanVerdict(v, n, `"${h}"`);
        expect(quoted).toHaveLength(1);
        expect(await scanVerdict(v, n, h)).toEqual(quoted);
      }),
      { numRuns: 12 },
    );
  });

  it("passes a sandboxed handler, and a native handler under a name that claims no sandbox", async () => {
    expect(packVerdict(runtimeClass("v1", "gvisor", "runsc"))).toEqual([]);
    expect(packVerdict(runtimeClass("v1", "kata", "kata-qemu"))).toEqual([]);
    expect(packVerdict(runtimeClass("v1", "standard", "runc"))).toEqual([]);
    const r = await scanFiles({ "rc.yaml": yamlOf("v1", "gvisor", "runsc") });
    expect(r.code).toBe(0);
    expect(r.report.skipped).toEqual([]);
    expect(r.report.resources.map((x) => x.name)).toEqual(["gvisor"]);
  });

  it("fails with a secret handler (the engine hands stack rules its value); an unknown one waits for the update", () => {
    const hidden = validateStack([runtimeClass("v1", "gvisor", secret("runc"))]).violations.filter(
      (v) => v.policy === RULE,
    );
    expect(hidden).toHaveLength(1);
    const later = validateStack([runtimeClass("v1", "gvisor", UNKNOWN_WIRE)]);
    expect(later.violations.filter((v) => v.policy === RULE)).toEqual([]);
    expect(
      later.notes
        .filter((v) => v.policy === RULE)
        .map((v) => v.message)
        .join(" "),
    ).toMatch(/not known until the update/);
  });

  it("names the class in the pack's config: the names that claim a sandbox and the native handlers", () => {
    const o = validateStack([runtimeClass("v1", "strong", "runc")], {
      [RULE]: { sandboxedNames: ["strong"], nativeHandlers: ["runc"] },
    });
    expect(o.violations.filter((v) => v.policy === RULE)).toHaveLength(1);
  });
});
