/**
 * Class 11: an exemption names a resource by the identity the engine gives it, and no text an author writes
 * in a name can make one resource pass for another.
 * - Pulumi: pulumi/pulumi sdk/go/common/resource/urn.go splits `urn:pulumi:<stack>::<project>::<type>::<name>` with
 *   `strings.SplitN(.., "::", 4)`: `Name()` is everything after the third `::` (names may hold any text, PR #14107)
 *   and `Type()` the third part's last `$` element. A Pod named `evil::Container::probe` is a Pod, not the
 *   Container `probe`.
 * - Engine API bodies: the daemon names a container by the create call's `?name=` query (dockerode puts the body's
 *   `name` there); labels name nothing. A name holding `:` or `/` is written escaped in the id (`%3A`, `%2F`), so
 *   `z:Pod/debug` is not `Pod/debug`.
 * - Kubernetes: kind, namespace and name each in their place; an object with only a `generateName` is named by the
 *   API server (`<generateName>` and five random characters), so `Pod/debug` does not exempt `generateName: debug`.
 * The pack and `scan` give the same verdict for every generated name and pattern.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { copy, safeK8sContainer, safePodSpec } from "../../policy/fixtures";
import { validate } from "../../policy/harness";
import { engineBody, pod } from "../fixtures";
import { blocking, type Files, scanFiles } from "../harness";

const POD = "kubernetes:core/v1:Pod";
const RULE = "sandbox-disallow-privileged";
const REASON = "a debug pod on the staging cluster; OPS-7";
const SEED = { seed: 20_260_313, numRuns: 60 };

function privilegedPod(): Record<string, unknown> {
  const spec = copy(safePodSpec()) as { containers: Record<string, unknown>[] };
  const c = safeK8sContainer();
  c.securityContext = { ...(c.securityContext as object), privileged: true };
  spec.containers = [c];
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec };
}

const urnOf = (name: string) => `urn:pulumi:test::sandbox::${POD}::${name}`;
/** The exemption for both rules a privileged container fails (privileged implies escalation). */
const configFor = (resource: string) => ({
  [RULE]: { exemptions: [{ resource, reason: REASON }] },
  "sandbox-disallow-privilege-escalation": { exemptions: [{ resource, reason: REASON }] },
});

/** Whether the pack still reports the privileged Pod named `name` under an exemption for `resource`. */
function packFails(name: string, resource: string): boolean {
  return validate(POD, privilegedPod(), { name, config: configFor(resource) }).violations.some(
    (v) => v.policy === RULE,
  );
}

/** Whether `scan` of the files fails the rule, under an exemption for `resource`. */
async function scanFails(files: Files, resource: string): Promise<{ code: number; fails: boolean }> {
  const { code, report } = await scanFiles({ ...files, "cfg.json": JSON.stringify(configFor(resource)) }, [
    "--config",
    "cfg.json",
  ]);
  const mine = report.findings.filter((f) => f.ruleId === RULE);
  expect(mine.length, JSON.stringify(report.errors)).toBeGreaterThan(0);
  return { code, fails: mine.some(blocking) };
}

/** The same Pod as a `pulumi preview --json` step under the harness's URN. */
function preview(name: string): Files {
  const urn = urnOf(name);
  const step = { op: "create", urn, newState: { type: POD, urn, inputs: privilegedPod() } };
  return { "preview.json": JSON.stringify({ steps: [step] }) };
}

/**
 * What an exemption pattern names, by the Pod's real type and name: its URN, or `Pod/<name>` for a name without a
 * `:` (a pattern with a `:` is a URN or a file's id).
 */
function names(pattern: string, name: string): boolean {
  return (
    pattern === urnOf(name) ||
    pattern === `urn:pulumi:test::sandbox::*::${name}` ||
    (!name.includes(":") && pattern === `Pod/${name}`)
  );
}

/** Text around `::` and `:` that looks like another type and name. */
const forgedName = fc
  .tuple(
    fc.constantFrom("evil", "x", ""),
    fc.constantFrom("Container", "Pod", "docker:index/container:Container", "kubernetes:core/v1:Pod"),
    fc.constantFrom("probe", "debug"),
  )
  .map(([a, t, n]) => (a === "" ? `${t}::${n}` : `${a}::${t}::${n}`));

/** Patterns an exemption for the forged-looking parts would use, and the ones for the real resource. */
const patternsFor = (name: string): string[] => {
  const parts = name.split("::");
  const last = parts[parts.length - 1] as string;
  const before = (parts[parts.length - 2] ?? "").split(":").pop() as string;
  return [
    `${before}/${last}`,
    `Pod/${last}`,
    `urn:pulumi:test::sandbox::*::${last}`,
    `urn:pulumi:test::sandbox::${POD}::${last}`,
    `urn:pulumi:test::sandbox::*${before}::${last}`,
    `Pod/${name}`,
    urnOf(name),
    `urn:pulumi:test::sandbox::*::${name}`,
  ];
};

describe("class 11: a Pulumi name holding `::` is one name", () => {
  it("the attacker's report: `evil::Container::probe` (a privileged Pod) is not the Container `probe`", async () => {
    expect(packFails("evil::Container::probe", "Container/probe")).toBe(true);
    expect(packFails("x::Pod::debug", "Pod/debug")).toBe(true);
    expect(await scanFails(preview("evil::Container::probe"), "Container/probe")).toEqual({
      code: 1,
      fails: true,
    });
    // Its own URN exempts it, in both; `Pod/<name>` does not, as a pattern with a `:` is a URN or a file's id.
    const own = urnOf("evil::Container::probe");
    expect(packFails("evil::Container::probe", own)).toBe(false);
    expect(packFails("evil::Container::probe", "Pod/evil::Container::probe")).toBe(true);
    expect(await scanFails(preview("evil::Container::probe"), own)).toEqual({
      code: 0,
      fails: false,
    });
  });

  it("for every forged-looking name and pattern, the pack and scan exempt exactly what names the real Pod", async () => {
    await fc.assert(
      fc.asyncProperty(
        forgedName.chain((n) => fc.tuple(fc.constant(n), fc.constantFrom(...patternsFor(n)))),
        async ([name, pattern]) => {
          const want = names(pattern, name);
          expect(packFails(name, pattern), `pack: ${name} / ${pattern}`).toBe(!want);
          expect((await scanFails(preview(name), pattern)).fails, `scan: ${name} / ${pattern}`).toBe(!want);
        },
      ),
      SEED,
    );
  }, 120_000);

  it("a preview step whose URN is not a URN of its type is refused, not judged under another identity", async () => {
    const inputs = privilegedPod();
    for (const urn of [
      "k.yaml:Pod/debug",
      "urn:pulumi:test::sandbox::docker:index/container:Container::probe",
    ]) {
      const files = {
        "preview.json": JSON.stringify({
          steps: [{ op: "create", urn, newState: { type: POD, urn, inputs } }],
        }),
      };
      const { code, report } = await scanFiles(files);
      expect(code).toBe(2);
      expect(report.errors.map((e) => e.message).join("\n")).toContain(JSON.stringify(urn));
    }
  });
});

describe("class 11: names taken from files never stand for another kind or file", () => {
  const privBody = (extra: Record<string, unknown>) => engineBody(extra, { Privileged: true });

  it("an Engine API body's own `name` or label `z:Pod/debug` does not match `Pod/debug`", async () => {
    for (const extra of [{ name: "z:Pod/debug" }, { Labels: { "sandbox.template": "z:Pod/debug" } }, {}]) {
      expect(await scanFails({ "body.json": privBody(extra) }, "Pod/debug")).toEqual({
        code: 1,
        fails: true,
      });
    }
    // The name the daemon gets (dockerode sends the body's `name` as `?name=`) exempts it.
    expect(await scanFails({ "body.json": privBody({ name: "debug" }) }, "launch/debug")).toEqual({
      code: 0,
      fails: false,
    });
    expect(await scanFails({ "body.json": privBody({}) }, "body.json:launch/container#1")).toEqual({
      code: 0,
      fails: false,
    });
    // A label names nothing.
    expect(
      await scanFails({ "body.json": privBody({ Labels: { "sandbox.template": "debug" } }) }, "launch/debug"),
    ).toEqual({ code: 1, fails: true });
  });

  const sep = fc.constantFrom(":", "/", "%3A", "::", "%");
  const word = fc.constantFrom("Pod", "debug", "ns", "launch", "service", "k.yaml");

  it("for every name built from separators, only the name itself exempts a body or a Pod", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(word, sep), { minLength: 1, maxLength: 3 }),
        word,
        async (parts, end) => {
          const name = `${parts.map(([w, s]) => `${w}${s}`).join("")}${end}`;
          const forged = [`Pod/${end}`, `launch/${end}`, `*:Pod/${end}`, `*:launch/${end}`, `Pod/ns/${end}`];
          for (const pattern of forged) {
            expect((await scanFails({ "body.json": privBody({ name }) }, pattern)).fails, pattern).toBe(true);
          }
          const escaped = name.replace(/%/g, "%25").replace(/:/g, "%3A").replace(/\//g, "%2F");
          expect((await scanFails({ "body.json": privBody({ name }) }, `launch/${escaped}`)).fails).toBe(
            false,
          );
        },
      ),
      { ...SEED, numRuns: 25 },
    );
  }, 120_000);

  const privPod = (meta: string) =>
    pod("p", { containerSecurity: "privileged: true" }).replace(
      "metadata:\n  name: p\n",
      `metadata:\n${meta}`,
    );

  it("a Pod's kind, namespace and name are each in their place; a generateName is not the name", async () => {
    const cases: [string, string, boolean][] = [
      ['  name: "x:Pod/debug"\n', "Pod/debug", true],
      ['  name: "ns/debug"\n', "Pod/ns/debug", true],
      ['  name: debug\n  namespace: "a/b"\n', "Pod/a/b/debug", true],
      ["  generateName: debug\n", "Pod/debug", true],
      ["  generateName: debug-\n", "Pod/debug-*", false],
      ["  name: debug\n", "Pod/debug", false],
      ["  name: debug\n  namespace: ns\n", "Pod/ns/debug", false],
      ["  name: debug\n  namespace: ns\n", "pod.yaml:Pod/ns/debug", false],
    ];
    for (const [meta, pattern, fails] of cases) {
      const files = { "pod.yaml": privPod(meta) };
      expect((await scanFails(files, pattern)).fails, `${meta.trim()} / ${pattern}`).toBe(fails);
    }
  });
});
