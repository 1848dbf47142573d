// Engine API create bodies read the way the daemon reads them: a differential test against the daemon's own decoder
// (test/oracles/engine-json: encoding/json into docker v28.5.2's container.CreateRequest) on generated bodies with
// every key spelling Go accepts, repeated keys, nulls and wrongly typed values; and the cases named in the issue.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { engineBody } from "../../policy/sources/docker/body";
import { foldKey, matchField } from "../../policy/sources/docker/decode";
import { fromYaml } from "../../policy/sources/docker/json-node";
import { CREATE_REQUEST, type Shape } from "../../policy/sources/docker/schema";
import { isUnreadable } from "../../policy/workload";
import { runOracle } from "../helpers/goOracle";

/** A body as written: members in order, so repeated keys survive into the text. */
type Written = { o: [string, Written][] } | { a: Written[] } | { raw: string };

function text(w: Written): string {
  if ("raw" in w) return w.raw;
  if ("a" in w) return `[${w.a.map(text).join(",")}]`;
  return `{${w.o.map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(",")}}`;
}

/** Every spelling Go matches to `name`: each letter in either case, `s`/`k` also as U+017F and U+212A. */
function spelling(name: string): fc.Arbitrary<string> {
  return fc
    .tuple(
      ...[...name].map((ch) => {
        const forms = new Set([ch, ch.toLowerCase(), ch.toUpperCase()]);
        if (ch.toLowerCase() === "s") forms.add("\u017f");
        if (ch.toLowerCase() === "k") forms.add("\u212a");
        return fc.constantFrom(...forms);
      }),
    )
    .map((cs) => cs.join(""));
}

const STRINGS = ["", "host", "/var/run/docker.sock:/s", "seccomp=unconfined", "0", "a", "A"];
const INTS = ["0", "-0", "1", "-1", "1.5", "1e3", "65536", "9223372036854775808"];
const WRONG: Written[] = [{ raw: '"x"' }, { raw: "1" }, { raw: "true" }, { raw: "[]" }, { raw: "{}" }];

function value(s: Shape, depth: number): fc.Arbitrary<Written> {
  const scalar = (() => {
    switch (s.k) {
      // A text the type parses itself (an IP address) is read as the text it is: the generated ones are valid.
      case "text":
        return fc.constant({ raw: '""' });
      case "string":
      case "bytes":
      case "any":
        return fc.constantFrom(...STRINGS).map((v) => ({ raw: JSON.stringify(v) }));
      case "bool":
        return fc.constantFrom("true", "false").map((raw) => ({ raw }));
      case "int":
      case "float":
        return fc.constantFrom(...INTS).map((raw) => ({ raw }));
      case "ptr":
        return value(s.to, depth);
      case "strslice":
        return fc.oneof(
          fc.constantFrom(...STRINGS).map((v) => ({ raw: JSON.stringify(v) })),
          fc.array(fc.constantFrom(...STRINGS), { maxLength: 3 }).map((a) => ({ raw: JSON.stringify(a) })),
        );
      case "slice":
      case "array":
        return depth <= 0
          ? fc.constant({ raw: "[]" })
          : fc.array(value(s.of, depth - 1), { maxLength: 3 }).map((a) => ({ a }));
      case "map":
        return depth <= 0
          ? fc.constant({ raw: "{}" })
          : fc
              .array(
                fc.tuple(
                  fc.constantFrom("a", "A", "host", "k", "80/tcp", "443", "53/UDP", "70000"),
                  value(s.of, depth - 1),
                ),
                {
                  maxLength: 3,
                },
              )
              .map((o) => ({ o }));
      case "struct":
        return depth <= 0 ? fc.constant({ raw: "{}" }) : object(s.fields, depth - 1);
      // Only the operators' CRD tables hold core Kubernetes types; the Engine API's never do.
      case "core":
        throw new Error(`the Engine API's tables hold no core Kubernetes type (${s.type})`);
    }
  })();
  return fc.oneof(
    { weight: 8, arbitrary: scalar },
    { weight: 1, arbitrary: fc.constant({ raw: "null" }) },
    // A text the type parses itself takes any text here (the readers do not parse addresses): no wrong text.
    { weight: 1, arbitrary: fc.constantFrom(...(s.k === "text" ? WRONG.slice(1) : WRONG)) },
  );
}

/** The fields the generator writes most: the walls. The rest are picked at random. */
const FAVOURITES = new Set([
  "HostConfig",
  "Privileged",
  "SecurityOpt",
  "Binds",
  "Mounts",
  "Source",
  "Type",
  "BindOptions",
  "Propagation",
  "User",
  "PidsLimit",
  "NetworkMode",
  "MaskedPaths",
  "CapAdd",
  "Devices",
  "Labels",
  "NetworkingConfig",
  "EndpointsConfig",
  "VolumeOptions",
  "DriverConfig",
  "Options",
]);

function object(fields: Readonly<Record<string, Shape>>, depth: number): fc.Arbitrary<Written> {
  const names = Object.keys(fields);
  if (names.length === 0) return fc.constant({ o: [] });
  const fav = names.filter((n) => FAVOURITES.has(n));
  const pick =
    fav.length > 0 ? fc.oneof(fc.constantFrom(...fav), fc.constantFrom(...names)) : fc.constantFrom(...names);
  const member = pick.chain((name) =>
    fc.tuple(
      fc.oneof({ weight: 3, arbitrary: fc.constant(name) }, { weight: 2, arbitrary: spelling(name) }),
      value(fields[name] as Shape, depth),
    ),
  );
  // Repeat a member sometimes so duplicates of one field (in several spellings) are common.
  return fc.array(member, { maxLength: 5 }).chain((ms) =>
    ms.length === 0
      ? fc.constant({ o: ms })
      : fc.array(fc.nat(ms.length - 1), { maxLength: 3 }).map((dups) => ({
          o: [...ms, ...dups.map((i) => ms[i] as [string, Written])],
        })),
  );
}

const BODY = object((CREATE_REQUEST as { fields: Record<string, Shape> }).fields, 4);

function ours(body: string): unknown {
  return engineBody(fromYaml(parseDocument(body, { uniqueKeys: false }).contents));
}

function hasUnreadable(v: unknown): boolean {
  if (isUnreadable(v)) return true;
  if (Array.isArray(v)) return v.some(hasUnreadable);
  if (typeof v === "object" && v !== null) return Object.values(v).some(hasUnreadable);
  return false;
}

/** Go prints zero values we leave out: absent equals a zero (not an empty list, which Go keeps apart from nil). */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === "") return true;
  if (Array.isArray(v)) return v.length > 0 && v.every(isZero);
  if (typeof v === "object") return Object.values(v).every(isZero);
  return false;
}

function isObject(v: unknown): v is object {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The paths where our reading and Go's differ. */
function differences(a: unknown, g: unknown, path = ""): string[] {
  // `omitempty` leaves an empty list or map out of Go's output.
  const empty = (Array.isArray(a) && a.length === 0) || (isObject(a) && Object.keys(a).length === 0);
  if (g === undefined && empty) return [];
  if (a === undefined || g === undefined || g === null) {
    return isZero(a) && isZero(g) ? [] : [`${path}: ours ${JSON.stringify(a)}, Go ${JSON.stringify(g)}`];
  }
  if (Array.isArray(a) && Array.isArray(g)) {
    if (a.length !== g.length) return [`${path}: ours ${JSON.stringify(a)}, Go ${JSON.stringify(g)}`];
    return a.flatMap((x, i) => differences(x, g[i], `${path}[${i}]`));
  }
  if (
    typeof a === "object" &&
    a !== null &&
    typeof g === "object" &&
    !Array.isArray(a) &&
    !Array.isArray(g)
  ) {
    const keys = new Set([...Object.keys(a), ...Object.keys(g)]);
    return [...keys].flatMap((k) =>
      differences((a as Record<string, unknown>)[k], (g as Record<string, unknown>)[k], `${path}.${k}`),
    );
  }
  return a === g ? [] : [`${path}: ours ${JSON.stringify(a)}, Go ${JSON.stringify(g)}`];
}

describe("Engine API bodies: decoded as the daemon decodes them", () => {
  it("matches the daemon's decoder on generated bodies (key case and folding, repeats, nulls, wrong types)", () => {
    const bodies = fc.sample(BODY, { numRuns: 400, seed: 20260511 }).map(text);
    const answers = JSON.parse(runOracle("engine-json", JSON.stringify(bodies))) as {
      body: unknown;
      error?: string;
    }[];
    let refusedSeen = 0;
    bodies.forEach((b, i) => {
      const go = answers[i];
      const mine = ours(b);
      if (go?.error !== undefined) {
        refusedSeen++;
        // The daemon refuses the body; we must not read it as anything that could pass.
        expect({ body: b, unreadable: hasUnreadable(mine) }).toEqual({ body: b, unreadable: true });
      } else {
        expect({ body: b, unreadable: hasUnreadable(mine) }).toEqual({ body: b, unreadable: false });
        expect({ body: b, diff: differences(mine, go?.body) }).toEqual({ body: b, diff: [] });
      }
    });
    // Both kinds of body were generated.
    expect(refusedSeen).toBeGreaterThan(20);
    expect(refusedSeen).toBeLessThan(bodies.length - 20);
  });

  it("takes the last of repeated keys in document order, whatever their case", () => {
    const b = ours('{"HostConfig":{"Privileged":true,"privileged":false,"Privileged":true}}');
    expect(b).toEqual({ HostConfig: { Privileged: true } });
    expect(ours('{"HostConfig":{"Privileged":true,"PRIVILEGED":false}}')).toEqual({
      HostConfig: { Privileged: false },
    });
  });

  it("folds U+017F to s and U+212A to k, and keeps data keys as written", () => {
    expect(ours('{"HostConfig":{"\u017fecurityOpt":["seccomp=unconfined"]}}')).toEqual({
      HostConfig: { SecurityOpt: ["seccomp=unconfined"] },
    });
    expect(ours('{"hostconfig":{"mas\u212aedPaths":[],"sysctls":{"Net.X":"1"}},"LABELS":{"A":"b"}}')).toEqual(
      {
        HostConfig: { MaskedPaths: [], Sysctls: { "Net.X": "1" } },
        Labels: { A: "b" },
      },
    );
    expect(foldKey("\u017f\u212a")).toBe("SK");
    expect(matchField({ Privileged: { k: "bool" } }, "pRiViLeGeD")).toBe("Privileged");
    expect(matchField({ Privileged: { k: "bool" } }, "Privileged\u0131")).toBeUndefined();
  });

  it("merges a repeated struct and decodes a repeated list into the old one's elements", () => {
    expect(
      ours(
        '{"HostConfig":{"Mounts":[{"Type":"bind","Source":"/var/run/docker.sock","Target":"/a"}]},' +
          '"hostConfig":{"mounts":[{"Target":"/b"}]}}',
      ),
    ).toEqual({ HostConfig: { Mounts: [{ Type: "bind", Source: "/var/run/docker.sock", Target: "/b" }] } });
  });

  it("lets null clear a list or pointer but never a flag", () => {
    expect(
      ours('{"HostConfig":{"Privileged":true,"privileged":null,"Binds":["/:/h"],"binds":null}}'),
    ).toEqual({
      HostConfig: { Privileged: true },
    });
  });

  it("reads a wrongly typed value as unreadable (the daemon refuses the body)", () => {
    const b = ours('{"HostConfig":{"Privileged":"true"}}') as { HostConfig: { Privileged: unknown } };
    expect(isUnreadable(b.HostConfig.Privileged)).toBe(true);
    const p = ours('{"HostConfig":{"PidsLimit":1.0}}') as { HostConfig: { PidsLimit: unknown } };
    expect(isUnreadable(p.HostConfig.PidsLimit)).toBe(true);
    expect(ours('{"HostConfig":{"PidsLimit":-0}}')).toEqual({ HostConfig: { PidsLimit: 0 } });
  });
});
