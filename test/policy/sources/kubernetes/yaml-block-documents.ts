// Documents inside and around the plain block subset of YAML (policy/sources/kubernetes/yaml-block.ts): block maps
// and sequences with keys and scalars chosen at the subset's edges (YAML 1.1 booleans and numbers, indicators, `#`,
// quotes, flow collections, tags, non-ASCII), anchors and aliases, in many layouts (indent widths, a sequence at its
// key's indent, `- key:` items, comment and blank lines, trailing spaces).
import fc from "fast-check";

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

export const tree: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
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
export const layout = fc.array(fc.nat({ max: 99 }), { minLength: 16, maxLength: 64 });

export function write(root: Node, choices: readonly number[]): string {
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
