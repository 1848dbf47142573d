/**
 * Generated: the failing classes of files 01 and 02 as families, so a fix by example does not pass.
 * - A create body with any set of top-level keys container.CreateRequest does not have (encoding/json ignores them)
 *   gets the verdict of the body without them: blocked when privileged, passing when hardened.
 * - A stream of hardened Pods with one privileged Pod at any position, where any documents start with a BOM (go-yaml
 *   v2 skips a BOM at the start of a document; kubectl splits the stream first), is blocked on that Pod.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { engineBody, pod, SAFE_CONTAINER_SECURITY } from "../fixtures";
import { assertVerdict, blocked, blocking, passes, scanFiles } from "../harness";

/** Keys the daemon ignores in a create body that name another input format to a sniffing reader. */
const DECOY = fc.constantFrom(
  ["kind", "Container"],
  ["kind", "sandbox.launch/v1"],
  ["apiVersion", "v1"],
  ["steps", []],
  ["deployment", {}],
  ["checkpoint", { latest: {} }],
  ["services", {}],
  ["metadata", { name: "x" }],
);

const withKeys = (text: string, keys: readonly (readonly [string, unknown])[]): string => {
  const body = JSON.parse(text) as Record<string, unknown>;
  return `${JSON.stringify({ ...Object.fromEntries(keys), ...body }, null, 2)}\n`;
};

describe("generated: create bodies with ignored keys", () => {
  it("a privileged body with any decoy keys is blocked like the plain one", async () => {
    assertVerdict(
      await scanFiles({ "body.json": engineBody({}, { Privileged: true }) }),
      blocked("sandbox-disallow-privileged"),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(DECOY, { minLength: 1, maxLength: 3, selector: (k) => k[0] }),
        async (keys) => {
          assertVerdict(
            await scanFiles({ "body.json": withKeys(engineBody({}, { Privileged: true }), keys) }),
            blocked("sandbox-disallow-privileged"),
          );
        },
      ),
      { numRuns: 25 },
    );
  });

  it("a hardened body with any decoy keys is refused for those keys alone, each named", async () => {
    assertVerdict(await scanFiles({ "body.json": engineBody() }), passes);
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(DECOY, { minLength: 1, maxLength: 3, selector: (k) => k[0] }),
        async (keys) => {
          const r = await scanFiles({ "body.json": withKeys(engineBody(), keys) });
          assertVerdict(r, blocked("sandbox-disallow-unjudged-fields"));
          const hits = r.report.findings.filter(blocking);
          // Nothing but the keys the claimed Engine API does not have, each by its name; with `apiVersion: v1` and
          // `kind: Container` the document is a Kubernetes object too, of a kind Kubernetes does not have, which
          // fails closed as such.
          const k8s = keys.some((k) => k[0] === "apiVersion") && keys.some((k) => k[1] === "Container");
          expect(hits.map((f) => f.ruleId).sort()).toEqual([
            ...keys.map(() => "sandbox-disallow-unjudged-fields"),
            ...(k8s ? ["sandbox-disallow-unjudged-workloads"] : []),
          ]);
          const fields = hits.filter((f) => f.ruleId === "sandbox-disallow-unjudged-fields");
          expect(fields.map((f) => f.path).sort()).toEqual(keys.map((k) => k[0]).sort());
        },
      ),
      { numRuns: 15 },
    );
  });
});

describe("generated: byte-order marks at document starts", () => {
  it("one privileged Pod among hardened ones, BOMs at any document starts, is blocked on it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 4 })
          .chain((n) =>
            fc.tuple(
              fc.constant(n),
              fc.integer({ min: 0, max: n - 1 }),
              fc.array(fc.boolean(), { minLength: n, maxLength: n }),
            ),
          ),
        async ([n, bad, boms]) => {
          const docs = Array.from({ length: n }, (_, i) => {
            const text =
              i === bad
                ? pod(`p${i}`, { securityContext: `${SAFE_CONTAINER_SECURITY}\nprivileged: true` })
                : pod(`p${i}`);
            return (boms[i] === true ? "\uFEFF" : "") + text;
          });
          assertVerdict(
            await scanFiles({ "pods.yaml": docs.join("---\n") }),
            blocked("sandbox-disallow-privileged", `p${bad}`),
          );
        },
      ),
      { numRuns: 25 },
    );
  });
});
