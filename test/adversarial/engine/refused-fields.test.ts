/**
 * Fields the project refuses (policy/sources/docker/verdicts.ts) fail closed in every spelling the daemon's
 * encoding/json takes for them (field names matched case-insensitively, with U+017F for s and U+212A for K), in the
 * scan of a create body and in the launcher's preflight (the same body judged by adaptLaunchSpec); at Go's zero
 * value they pass. A key that names no field of the claimed API fails closed too, whatever it is called.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judge } from "../../../policy/rules/registry";
import { adaptLaunchSpec } from "../../../policy/sources/docker/read";
import { engineBody } from "../fixtures";
import { assertVerdict, blocked, blocking, passes, scanFiles } from "../harness";

const RULE = "sandbox-disallow-unjudged-fields";

/** A refused HostConfig field, a value that sets it, and its zero value. */
const REFUSED: readonly (readonly [string, unknown, unknown])[] = [
  ["Links", ["sandbox-broker:broker"], []],
  ["CgroupParent", "/", ""],
  ["Cgroup", "container:other", ""],
  ["OomKillDisable", true, false],
  ["OomScoreAdj", -1000, 0],
  ["CpuRealtimeRuntime", 950000, 0],
  ["VolumeDriver", "convoy", ""],
  ["Annotations", { "run.oci.keep_original_groups": "1" }, {}],
  [
    "LogConfig",
    { Type: "gelf", Config: { "gelf-address": "udp://203.0.113.9:12201" } },
    { Type: "json-file" },
  ],
  ["Ulimits", [{ Name: "rtprio", Soft: 99, Hard: 99 }], []],
];

/** Spellings encoding/json matches to `name`: any case, `s` as U+017F, `k` as U+212A. */
function spellings(name: string): fc.Arbitrary<string> {
  return fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).chain((upper) =>
    fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map((odd) =>
      [...name]
        .map((ch, i) => {
          const c = upper[i] ? ch.toUpperCase() : ch.toLowerCase();
          if (odd[i] && (c === "s" || c === "S")) return "\u017f";
          if (odd[i] && (c === "k" || c === "K")) return "\u212a";
          return c;
        })
        .join(""),
    ),
  );
}

function preflight(body: string): string[] {
  return judge(adaptLaunchSpec(JSON.parse(body), "t"))
    .filter((r) => r.findings.some((f) => !f.unchecked))
    .map((r) => r.rule.id);
}

describe("refused Engine API fields, in every spelling the daemon takes (generated)", () => {
  it("each is refused under any spelling of its name, in scan and in the preflight, and named canonically", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...REFUSED)
          .chain(([name, set]) => spellings(name).map((key) => [name, key, set] as const)),
        async ([name, key, set]) => {
          const body = engineBody({}, { [key]: set });
          const r = await scanFiles({ "create.json": body });
          assertVerdict(r, blocked(RULE));
          expect(r.report.findings.filter(blocking).map((f) => f.path)).toContain(`HostConfig.${name}`);
          expect(preflight(body)).toContain(RULE);
        },
      ),
      { numRuns: 40 },
    );
  });

  it.each(REFUSED)("%s at Go's zero value passes", async (name, _set, zero) => {
    const body = engineBody({}, { [name]: zero });
    assertVerdict(await scanFiles({ "create.json": body }), passes);
    expect(preflight(body)).not.toContain(RULE);
  });

  it("a key the claimed API does not have fails closed under any name, never read as a field", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom("KernelMemory", "MacAddress", "Privilеged", "CapAddd", "HostConfig2")
          .chain(spellings),
        async (key) => {
          const r = await scanFiles({ "create.json": engineBody({}, { [key]: true }) });
          assertVerdict(r, blocked(RULE));
        },
      ),
      { numRuns: 15 },
    );
  });
});
