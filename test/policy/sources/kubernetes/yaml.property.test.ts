// Generated manifests in many spellings: (1) the scanner reads each exactly as the engine's decoder does (the
// kube-yaml oracle: sigs.k8s.io/yaml YAMLToJSON), and engine-equivalent spellings read as the value written;
// (2) through parseInput and the rules, a dangerous value in any engine-equivalent spelling gets the same rule ids as
// its plain spelling, and safe values in any spelling get no new violation.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judge } from "../../../../policy/rules/registry";
import { adaptResources } from "../../../../policy/sources/subject";
import { parseInput } from "../../../../policy/sources/text/documents";
import { engine, outcome } from "./yaml-oracle";
import { ours, type Reading } from "./yaml-reading";
import { choicesArb, type Mode, spell, type Tree } from "./yaml-spell";

type Obj = { readonly [k: string]: Tree };

const capability = fc.constantFrom("SYS_ADMIN", "NET_ADMIN", "NET_RAW", "ALL", "CHOWN", "cap_sys_admin");

const securityContext = fc.record(
  {
    privileged: fc.boolean(),
    allowPrivilegeEscalation: fc.boolean(),
    runAsUser: fc.constantFrom(0, 1, 1000, 65534),
    runAsNonRoot: fc.boolean(),
    readOnlyRootFilesystem: fc.boolean(),
    capabilities: fc.record(
      { add: fc.array(capability, { maxLength: 2 }), drop: fc.array(capability, { maxLength: 2 }) },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

const podSpec = fc
  .record(
    {
      hostNetwork: fc.boolean(),
      hostPID: fc.boolean(),
      hostIPC: fc.boolean(),
      sc: securityContext,
      hostPath: fc.option(fc.constantFrom("/", "/var/run/docker.sock", "/tmp/data"), { nil: undefined }),
    },
    { requiredKeys: ["sc"] },
  )
  .map(({ sc, hostPath, ...host }): Obj => {
    const container: Obj = {
      name: "app",
      image: "registry.example/app:1",
      securityContext: sc as Obj,
      ...(hostPath === undefined ? {} : { volumeMounts: [{ name: "h", mountPath: "/h" }] }),
    };
    return {
      ...host,
      containers: [container],
      ...(hostPath === undefined ? {} : { volumes: [{ name: "h", hostPath: { path: hostPath } }] }),
    };
  });

/** A Pod or a Deployment carrying the generated pod spec. */
const manifest = fc.tuple(fc.boolean(), podSpec).map(
  ([pod, spec]): Obj =>
    pod
      ? { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec }
      : {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "p" },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: "p" } },
            template: { metadata: { labels: { app: "p" } }, spec },
          },
        },
);

function samples(mode: Mode, seed: number, runs: number): { model: Obj; text: string }[] {
  return fc
    .sample(fc.tuple(manifest, choicesArb), { seed, numRuns: runs })
    .map(([model, choices]) => ({ model, text: spell(model, choices, mode) }));
}

function withoutReuse(json: unknown): unknown {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const { "x-reuse": _ignored, ...rest } = json as Record<string, unknown>;
  return rest;
}

describe("kubeYamlToJson equals the engine's YAMLToJSON on generated manifests", () => {
  for (const [mode, seed] of [
    ["same", 7101],
    ["any", 7102],
  ] as const) {
    it(`${mode === "same" ? "engine-equivalent" : "type-changing"} spellings`, () => {
      const cases = samples(mode, seed, 400);
      const answers = engine(cases.map((c) => c.text));
      cases.forEach(({ model, text }, i) => {
        const mine = ours(text);
        // The scanner reads what the engine reads, error for error.
        expect({ text, reading: outcome(mine) }).toEqual({ text, reading: outcome(answers[i] as Reading) });
        // Engine-equivalent spellings are the value written.
        if (mode === "same")
          expect({ text, json: "json" in mine ? withoutReuse(mine.json) : mine }).toEqual({
            text,
            json: model,
          });
      });
    });
  }
});

/** Plain scalars from the characters that decide YAML 1.1 resolution, bare, tagged, quoted, and as keys. */
const scalarText = fc.oneof(
  fc.stringMatching(/^[-+]?(0[xXoObB])?[0-9a-fA-F_]{0,6}(\.[0-9_]{0,3})?([eE][-+]?[0-9_]{1,3})?$/),
  fc.stringMatching(/^[-+.0-9_:eExXoObBiInNfFaA~yYsStTrRuUlL]{1,8}$/),
  fc.stringMatching(
    /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]{1,3})?(Z|[-+][0-9]{2}:[0-9]{2})?)?$/,
  ),
  fc.constantFrom(
    "y",
    "Yes",
    "oN",
    "OFF",
    "~",
    "Null",
    ".inf",
    "-.Inf",
    ".NaN",
    "<<",
    "0b-1",
    "-0b-1",
    "1e400",
    "0x",
    "00",
  ),
);
const tag = fc.constantFrom(
  "",
  "!!int ",
  "!!float ",
  "!!bool ",
  "!!null ",
  "!!str ",
  "!!timestamp ",
  "! ",
  "!x ",
);

describe("scalar resolution equals the engine's on generated scalars", () => {
  it("as values and as keys, plain and tagged", () => {
    const texts = fc
      .sample(fc.tuple(scalarText, tag, fc.constantFrom("value", "key", "quoted")), {
        seed: 7105,
        numRuns: 3000,
      })
      .map(([text, t, where]) =>
        where === "key" ? `${t}${text}: x` : where === "quoted" ? `a: ${t}"${text}"` : `a: ${t}${text}`,
      );
    const answers = engine(texts);
    texts.forEach((text, i) => {
      // The same value, or an error where the engine has one (the messages differ).
      expect({ text, reading: outcome(ours(text)) }).toEqual({
        text,
        reading: outcome(answers[i] as Reading),
      });
    });
  });
});

/** The violated rule ids of every resource in a YAML text, or the input errors. */
function verdict(text: string): string[] {
  const parsed = parseInput("m.yaml", text);
  if (parsed.errors.length > 0) return parsed.errors.map((e) => `error: ${e.message}`);
  const ids = new Set<string>();
  for (const item of parsed.items)
    for (const subject of adaptResources(item.type, item.props, item.name, item.taint))
      for (const { rule, findings } of judge(subject))
        if (findings.some((f) => f.unchecked !== true)) ids.add(rule.id);
  return [...ids].sort();
}

describe("the same verdict for every engine-equivalent spelling", () => {
  it("a manifest's rule ids do not depend on how its values are spelled", () => {
    fc.assert(
      fc.property(manifest, choicesArb, (model, choices) => {
        const plain = JSON.stringify(model);
        expect(verdict(spell(model, choices, "same"))).toEqual(verdict(plain));
      }),
      { seed: 7103, numRuns: 300 },
    );
  });

  it("a dangerous value is found in every spelling", () => {
    const dangerous: Obj = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: {
        hostNetwork: true,
        containers: [
          {
            name: "app",
            image: "i",
            securityContext: { privileged: true, runAsUser: 0, allowPrivilegeEscalation: true },
          },
        ],
      },
    };
    const plain = verdict(JSON.stringify(dangerous));
    expect(plain.length).toBeGreaterThan(0);
    fc.assert(
      fc.property(choicesArb, (choices) => {
        expect(verdict(spell(dangerous, choices, "same"))).toEqual(plain);
      }),
      { seed: 7104, numRuns: 300 },
    );
  });
});
