// The plain block reader (policy/sources/kubernetes/yaml-block.ts) against the full reading (the `yaml` package's tree through
// kubeYamlToJson, itself checked against the engine's decoder in yaml-kube.property.test.ts): on generated documents
// inside and around the subset, whatever the block reader accepts it reads to the same value, with the same line for
// every key and item; what the full reading refuses, the block reader never accepts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { workloads } from "../../../../bench/workloads";
import { readBlockYaml } from "../../../../policy/sources/kubernetes/yaml-block";
import {
  DEFAULT_MAX_ALIAS_NODES,
  DEFAULT_MAX_DEPTH,
  structureProblem,
} from "../../../../policy/sources/text/limits";
import { Lines } from "../../../../policy/sources/text/lines";
import { parseYamlDocuments } from "../../../../policy/sources/text/yaml-docs";
import { ours } from "./yaml-reading";

/** Keys, with some that resolve to something else in YAML 1.1, or that no plain key may be. */
const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("name", "image", "a.b/c-d_e", "spec", "x", "_k", "labels") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "on",
      "y",
      "No",
      "null",
      "~",
      "1",
      "0x1",
      "<<",
      "__proto__",
      "a b",
      "-x",
      "a:b",
      "a#b",
    ),
  },
);

/** Scalar texts as written after `key: ` or `- `, with the characters that decide the subset and YAML 1.1 meaning. */
const scalar = fc.oneof(
  fc.constantFrom(
    "v",
    "C.UTF-8",
    "registry.example/app:1",
    "/job/run.sh",
    "500m",
    "RuntimeDefault",
    "http://x:80/y",
  ),
  fc.constantFrom(
    "yes",
    "On",
    "n",
    "~",
    "null",
    "NULL",
    "true",
    "0",
    "-1",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    "1e3",
  ),
  fc.constantFrom(".inf", "-.Inf", ".nan", "1.5", "-.5", "+1", "0b101", "2001-12-14", "12:30", "1:20:30"),
  fc.constantFrom('"q"', "'s'", '"a#b"', "'it''s'", '"a\\nb"', '"unterminated', "[]", "{}", "[a]", "{a: 1}"),
  fc.constantFrom(
    "a # c",
    "a#b",
    "a: b",
    "a:",
    "- a",
    "-",
    "&x",
    "*x",
    "*y",
    "!!str 1",
    "!t v",
    "|",
    ">-",
    "%x",
  ),
  fc.constantFrom("@x", "`x", "a, b", "a [b]", "=", "a  b", "it's", "x\ty", "x\u0085y", "caf\u00e9"),
  fc.stringMatching(/^[-+.0-9_:eExXoObBiInNfFaA~yYsStTrRuUlL ]{1,8}$/),
);

type Node =
  | { k: "map"; entries: [string, Node][]; anchor?: string }
  | { k: "seq"; items: Node[]; anchor?: string }
  | {
      k: "scalar";
      text: string;
    };

const tree: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 3, arbitrary: scalar.map((text): Node => ({ k: "scalar", text })) },
    {
      weight: 2,
      arbitrary: fc
        .record({
          entries: fc.array(fc.tuple(key, tie("node")), { minLength: 1, maxLength: 4 }),
          anchor: fc.option(fc.constantFrom("x", "y", "bad name"), { nil: undefined, freq: 4 }),
        })
        .map((m): Node => ({ k: "map", ...m })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({
          items: fc.array(tie("node"), { minLength: 1, maxLength: 3 }),
          anchor: fc.option(fc.constantFrom("x", "y"), { nil: undefined, freq: 4 }),
        })
        .map((s): Node => ({ k: "seq", ...s })),
    },
  ),
})).node;

/** Layout choices: indent widths, a sequence at its key's indent or deeper, compact items, comments, blank lines. */
const layout = fc.array(fc.nat({ max: 99 }), { minLength: 16, maxLength: 64 });

function write(root: Node, choices: readonly number[]): string {
  let c = 0;
  const pick = (n: number) => (choices[c++ % choices.length] ?? 0) % n;
  const out: string[] = [];
  const extra = () => {
    const r = pick(20);
    if (r === 0) out.push("");
    else if (r === 1) out.push(`${" ".repeat(pick(6))}# a comment: with - things`);
  };
  const anchor = (n: Node) => (n.k !== "scalar" && n.anchor !== undefined ? `&${n.anchor}` : "");
  // Writes `n` as the value after `head` (a line prefix such as "  key:" or "  -"), at `indent`.
  const value = (head: string, n: Node, indent: number, inMap: boolean): void => {
    if (n.k === "scalar") {
      out.push(`${head} ${n.text}${pick(8) === 0 ? "  " : ""}`);
      extra();
      return;
    }
    const a = anchor(n);
    const step = 1 + pick(4);
    // A map inside a sequence item may start on the item's line (`- key: v`).
    if (!inMap && a === "" && pick(2) === 0) {
      block(n, indent + step, `${head}${" ".repeat(step - 1)} `);
      return;
    }
    out.push(a === "" ? head : `${head} ${a}`);
    extra();
    const same = inMap && n.k === "seq" && pick(3) === 0;
    block(n, same ? indent : indent + step);
  };
  const block = (n: Node, indent: number, first?: string): void => {
    const pad = " ".repeat(indent);
    let lead = first;
    const line = () => {
      const l = lead ?? pad;
      lead = undefined;
      return l;
    };
    if (n.k === "map") for (const [k, v] of n.entries) value(`${line()}${k}:`, v, indent, true);
    else if (n.k === "seq") for (const v of n.items) value(`${line()}-`, v, indent, false);
  };
  if (root.k === "scalar") return `${root.text}\n`;
  block(root, pick(2));
  return `${out.join("\n")}\n`;
}

/** Every key and item path of a value. */
function paths(v: unknown, base: (string | number)[] = []): (string | number)[][] {
  const out = [base];
  if (Array.isArray(v)) for (const [i, x] of v.entries()) out.push(...paths(x, [...base, i]));
  else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...base, k]));
  return out;
}

function fullLines(text: string): Lines {
  const { docs, counter } = parseYamlDocuments(text);
  return new Lines(docs[0], counter, 3);
}

describe("the plain block reader reads what the full reader reads", () => {
  it("the same value and lines on generated documents, and never a document the full reading refuses", () => {
    let accepted = 0;
    let refusedByFull = 0;
    const samples = fc.sample(fc.tuple(tree, layout), { seed: 4242, numRuns: 5000 });
    for (const [root, choices] of samples) {
      const text = write(root, choices);
      const block = readBlockYaml(text);
      const full = ours(text);
      if ("error" in full) refusedByFull++;
      if (block === undefined) continue;
      accepted++;
      expect({ text, full }).toEqual({ text, full: { json: block.value } });
      expect({ text, order: JSON.stringify(block.value) }).toEqual({
        text,
        order: "json" in full ? JSON.stringify(full.json) : full.error,
      });
      const mine = Lines.ofBlock(block.lines, 3, () => parseYamlDocuments(text));
      const theirs = fullLines(text);
      for (const p of paths(block.value))
        expect({ text, path: p, line: mine.line(p) }).toEqual({ text, path: p, line: theirs.line(p) });
    }
    // Neither vacuous nor trivial: many documents are in the subset, and many the full reading refuses are not.
    expect(accepted).toBeGreaterThan(400);
    expect(refusedByFull).toBeGreaterThan(400);
  });

  it("the benchmark's manifests, as a YAML writer spells them, are all in the subset and read the same", () => {
    for (const m of workloads(200, 5)) {
      const text = stringify(m);
      const block = readBlockYaml(text);
      expect(block, text).toBeDefined();
      expect(ours(text)).toEqual({ json: block?.value });
    }
  });

  it("node() of block lines is the full tree's node, parsed only when asked", () => {
    const text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: b\n";
    let parsed = 0;
    const block = readBlockYaml(text);
    const lines = Lines.ofBlock(block?.lines ?? { line: 1 }, 1, () => {
      parsed++;
      return parseYamlDocuments(text);
    });
    expect(lines.line(["spec", "containers", 0, "image"])).toBe(6);
    expect(parsed).toBe(0);
    expect(String(lines.node(["spec", "containers", 0, "name"]))).toBe("a");
    expect(parsed).toBe(1);
  });

  it("aliases in the block subset still meet the structure caps: a block-style alias bomb is refused", () => {
    const levels = ["a: &a\n  - x\n  - x"];
    for (let i = 1; i < 30; i++)
      levels.push(`l${i}: &l${i}\n  - *${i === 1 ? "a" : `l${i - 1}`}\n  - *${i === 1 ? "a" : `l${i - 1}`}`);
    const bomb = `${levels.join("\n")}\n`;
    expect(readBlockYaml(bomb)).toBeUndefined();
    expect(
      structureProblem(bomb, { maxDepth: DEFAULT_MAX_DEPTH, maxAliasNodes: DEFAULT_MAX_ALIAS_NODES })
        ?.message,
    ).toMatch(/aliases expand to more than/);
    // A small expansion within the caps passes, and a tight cap refuses it.
    const small = "a: &a\n  b: [x]\nc: *a\nd: *a\n";
    expect(readBlockYaml(small)).toBeUndefined(); // a flow sequence is outside the subset
    const blockSmall = "a: &a\n  b: x\n  c: z\nd: *a\ne: *a\n";
    expect(readBlockYaml(blockSmall)?.value).toEqual({
      a: { b: "x", c: "z" },
      d: { b: "x", c: "z" },
      e: { b: "x", c: "z" },
    });
    expect(structureProblem(blockSmall, { maxDepth: 64, maxAliasNodes: 1000 })).toBeUndefined();
    expect(structureProblem(blockSmall, { maxDepth: 64, maxAliasNodes: 4 })?.message).toMatch(
      /more than 4 extra nodes/,
    );
    expect(structureProblem(blockSmall, { maxDepth: 1, maxAliasNodes: 1000 })?.message).toMatch(
      /nested deeper than 1/,
    );
  });
});
