// Kubernetes YAML read as kubectl and the API server read it (sigs.k8s.io/yaml YAMLToJSON over go-yaml v2): a table
// of named cases, each with the exact JSON (or error) and checked against the engine's own decoder (the oracle).
import { describe, expect, it } from "vitest";
import { parseInput } from "../../../../policy/sources/text/documents";
import { Unreadable } from "../../../../policy/workload";
import { engine } from "./yaml-oracle";
import { ours, type Reading } from "./yaml-reading";

type Expect = unknown;

/** [name, document, the value of key `a` (or the whole document for `doc:` names), or an error pattern]. */
const CASES: readonly (readonly [string, string, Expect | RegExp])[] = [
  // YAML 1.1 booleans: every spelling go-yaml v2 knows, and the near misses that stay text.
  ...["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"].map(
    (s) => [`bool true: ${s}`, `a: ${s}`, true] as const,
  ),
  ...["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"].map(
    (s) => [`bool false: ${s}`, `a: ${s}`, false] as const,
  ),
  ...["yEs", "tRUE", "oN", "nO", "Off1", "t", "f"].map((s) => [`not a bool: ${s}`, `a: ${s}`, s] as const),
  ["quoted true is text", 'a: "true"', "true"],
  ["single-quoted yes is text", "a: 'yes'", "yes"],
  ["block scalar true is text", "a: |-\n  true", "true"],
  // Nulls.
  ...["~", "null", "Null", "NULL", ""].map((s) => [`null: '${s}'`, `a: ${s}`, null] as const),
  ["nUll is text", "a: nUll", "nUll"],
  ["quoted null is text", 'a: "null"', "null"],
  // Integers: Go's strconv with base 0 after removing underscores.
  ["decimal", "a: 1000", 1000],
  ["plus sign", "a: +12", 12],
  ["minus zero is zero", "a: -0", 0],
  ["hex", "a: 0x1F", 31],
  ["hex upper prefix", "a: 0X1f", 31],
  ["signed hex", "a: -0x1F", -31],
  ["binary", "a: 0b101", 5],
  ["negative binary", "a: -0b11", -3],
  ["go-yaml's signed binary after the prefix", "a: 0b-1", -1],
  ["leading-zero octal", "a: 0755", 493],
  ["0o octal", "a: 0o17", 15],
  ["octal with a non-octal digit is a float", "a: 08", 8],
  ["double zero", "a: 00", 0],
  ["underscores anywhere", "a: 1_000_000", 1000000],
  ["underscore after hex prefix", "a: 0x_1F", 31],
  ["int64 max", "a: 9223372036854775807", Number("9223372036854775807")],
  ["uint64 max", "a: 18446744073709551615", Number("18446744073709551615")],
  ["beyond uint64 is a float", "a: 18446744073709551616", Number("18446744073709551616")],
  ["bare 0x is text", "a: 0x", "0x"],
  ["leading underscore is text", "a: _1", "_1"],
  // Floats.
  ["leading dot", "a: .5", 0.5],
  ["exponent", "a: 1e3", 1000],
  ["trailing dot", "a: 1.", 1],
  ["signed leading dot", "a: -.5", -0.5],
  ["underscores in a float", "a: 1_000.5", 1000.5],
  ["underscore between digits after the dot", "a: .5_0", 0.5],
  ["underscore right after the dot is text", "a: ._5", "._5"],
  ["minus zero float stays minus zero", "a: -0.0", -0],
  ["overflowing float is text", "a: 1e400", "1e400"],
  ["underflowing float is zero", "a: 1e-400", 0],
  ["hex float is text", "a: 0x1p-2", "0x1p-2"],
  ["sexagesimal is text in v2", "a: 1:20", "1:20"],
  ["inf as a value is an error", "a: .inf", /unsupported value/],
  ["negative inf as a value is an error", "a: -.Inf", /unsupported value/],
  ["nan as a value is an error", "a: .NaN", /unsupported value/],
  ["nan overwritten by a later duplicate is fine", "a: .nan\na: 1", 1],
  ["inf-like text", "a: .iNf", ".iNf"],
  // Timestamps stay their text.
  ["date", "a: 2001-12-14", "2001-12-14"],
  ["date-time", "a: 2001-12-14T21:59:43.10Z", "2001-12-14T21:59:43.10Z"],
  // Explicit tags.
  ["!!str keeps the text", "a: !!str 123", "123"],
  ["!!str on true", "a: !!str true", "true"],
  ["!!int", "a: !!int 0x10", 16],
  ["!!int of text is an error", "a: !!int abc", /cannot decode !!str `abc` as a !!int/],
  ["!!int of a float is an error", "a: !!int 1.0", /as a !!int/],
  ["!!float of an int", "a: !!float 1", 1],
  ["!!float of uint64 is an error", "a: !!float 18446744073709551615", /as a !!float/],
  ["!!bool on quoted yes", 'a: !!bool "yes"', true],
  ["!!bool of text is an error", "a: !!bool maybe", /as a !!bool/],
  ["!!null", "a: !!null ~", null],
  ["!!null of text is an error", "a: !!null foo", /as a !!null/],
  ["!!timestamp", "a: !!timestamp 2001-1-2T3:4:5.123Z", "2001-1-2T3:4:5.123Z"],
  ["!!timestamp of an impossible date is an error", "a: !!timestamp 2001-02-30", /as a !!timestamp/],
  ["verbatim tag", "a: !<tag:yaml.org,2002:int> 7", 7],
  ["%TAG handle", "%TAG !e! tag:yaml.org,2002:\n---\na: !e!int 7", 7],
  ["non-specific tag keeps the text", "a: ! true", "true"],
  ["custom tag keeps the text", "a: !foo 1", "1"],
  ["custom tag on a boolean keeps the text", "a: !foo true", "true"],
  ["!!merge on a value is text", "a: !!merge x", "x"],
  ["!!str on a map is still a map", "a: !!str {b: 1}", { b: 1 }],
  ["!!binary is the decoded text", "a: !!binary dHJ1ZQ==", "true"],
  ["!!binary with line breaks", "a: !!binary |\n  dHJ1\n  ZQ==", "true"],
  ["!!binary invalid UTF-8 becomes U+FFFD per byte", "a: !!binary 4oI=", "\ufffd\ufffd"],
  ["!!binary encoded surrogate is three U+FFFD", "a: !!binary 7aCA", "\ufffd\ufffd\ufffd"],
  ["!!binary without padding is an error", "a: !!binary dHJ1ZQ", /invalid base64/],
  ["!!binary with a space is an error", "a: !!binary dHJ1 ZQ==", /invalid base64/],
  // Keys.
  ["doc: int key", "1: x", { "1": "x" }],
  ["doc: bool key", "true: x", { true: "x" }],
  ["doc: yes key", "yes: x", { true: "x" }],
  ["doc: y key is true", "y: 1\nn: 0", { true: 1, false: 0 }],
  ["doc: float key at float32 precision", "1.23456789: x", { "1.2345679": "x" }],
  ["doc: float key with exponent", "1e20: x", { "1e+20": "x" }],
  ["doc: million float key", "1000000.0: x", { "1e+06": "x" }],
  ["doc: float key 1.0", "1.0: x", { "1": "x" }],
  ["doc: inf key", ".inf: x", { ".inf": "x" }],
  ["doc: hex key", "0x10: x", { "16": "x" }],
  ["doc: null key is an error", "null: x", /unsupported map key/],
  ["doc: tilde key is an error", "~: x", /unsupported map key/],
  ["doc: uint64 key is an error", "18446744073709551615: x", /unsupported map key/],
  ["doc: sequence key is an error", "? [1]\n: x", /invalid map key/],
  ["doc: __proto__ is an ordinary key", "__proto__: x", JSON.parse('{"__proto__":"x"}')],
  ["doc: null key inside a value later overwritten", "a: {null: 1}\na: 2", { a: 2 }],
  // Duplicates and merges.
  ["duplicate: the last wins", "a: 1\na: 2", 2],
  ["doc: merge, explicit key after wins", "<<: {a: 1, b: 1}\na: 2", { a: 2, b: 1 }],
  ["doc: merge, explicit key before loses", "a: 2\n<<: {a: 1, b: 1}", { a: 1, b: 1 }],
  ["doc: two merges, document order", "<<: {a: 1}\na: 2\n<<: {a: 3}", { a: 3 }],
  ["doc: merge list, first map wins", "<<: [{a: 1}, {a: 2, b: 2}]", { a: 1, b: 2 }],
  ["doc: merge of an alias", "x: &m {a: 1}\np:\n  <<: *m\n  b: 2", { x: { a: 1 }, p: { a: 1, b: 2 } }],
  [
    "doc: merge list of aliases",
    "x: &m {a: 1}\nz: &n {a: 3, c: 3}\np: {<<: [*m, *n]}",
    { x: { a: 1 }, z: { a: 3, c: 3 }, p: { a: 1, c: 3 } },
  ],
  ["doc: nested merge", "x: &m {<<: {a: 1}, b: 1}\np: {<<: *m}", { x: { a: 1, b: 1 }, p: { a: 1, b: 1 } }],
  ["doc: quoted << is a plain key", '"<<": {a: 1}', { "<<": { a: 1 } }],
  ["doc: !!merge tagged key merges", "!!merge <<: {a: 1}", { a: 1 }],
  ["doc: !!str tagged << is a plain key", "!!str <<: {a: 1}", { "<<": { a: 1 } }],
  ["doc: merge of a scalar is an error", "<<: 1", /map merge requires map/],
  ["doc: merge of null is an error", "<<:", /map merge requires map/],
  ["doc: merge of an alias of a list is an error", "x: &l [1]\np: {<<: *l}", /map merge requires map/],
  ["doc: merge list holding a scalar is an error", "<<: [{a: 1}, 2]", /map merge requires map/],
  ["doc: empty merge list", "<<: []\na: 1", { a: 1 }],
  // Anchors and aliases.
  ["doc: alias copies", "x: &v 5\np: *v", { x: 5, p: 5 }],
  [
    "doc: redefined anchor, the latest before the alias",
    "x: &v 1\np: *v\nz: &v 2\nw: *v",
    { x: 1, p: 1, z: 2, w: 2 },
  ],
  ["doc: alias of a tagged scalar keeps the tag", "x: &v !!str 1\np: *v", { x: "1", p: "1" }],
  ["doc: recursive alias is an error", "a: &x [*x]", /contains itself/],
  ["doc: unknown anchor is an error", "a: *nope", /unknown anchor|not valid YAML/],
  ["doc: anchor with a dot is an error", "a: &x.y 1", /not valid for the engine/],
  // Collections and documents.
  ["doc: flow pair in a sequence is a map", "[a: 1]", [{ a: 1 }]],
  ["doc: empty document", "", null],
  ["doc: comment only", "# nothing\n", null],
  ["doc: explicit markers", "---\na: 1\n...\n", { a: 1 }],
  ["doc: %YAML 1.1", "%YAML 1.1\n---\na: 1", { a: 1 }],
  ["doc: %YAML 1.2 is an error", "%YAML 1.2\n---\na: 1", /incompatible YAML document/],
  // Raw text YAML 1.1 reads differently.
  ["doc: a control character is refused", "a: x\u0001y", /control characters|not valid YAML/],
  ["doc: \\/ is no escape for the engine", 'a: "x\\/y"', /unknown escape/],
  ["doc: escaped surrogate is refused", 'a: "\\ud800"', /invalid Unicode/],
];

function expected(name: string, value: unknown): unknown {
  return name.startsWith("doc: ") ? value : { a: value };
}

describe("kubeYamlToJson reads YAML as sigs.k8s.io/yaml does", () => {
  const answers = engine(CASES.map(([, text]) => text));
  CASES.forEach(([name, text, want], i) => {
    it(name, () => {
      const got = ours(text);
      const oracle = answers[i] as Reading;
      if (want instanceof RegExp) {
        // Ours fails where the engine fails (the scanner reports it as "not valid YAML").
        expect("error" in got ? got.error : got.json).toMatch(want);
        expect("error" in oracle).toBe(true);
        return;
      }
      expect(got).toEqual({ json: expected(name, want) });
      expect(oracle).toEqual({ json: expected(name, want) });
    });
  });
});

/** Text the engine reads as another document than the YAML 1.2 parser does: refused here, never misread. */
const MISREAD: readonly (readonly [string, string, unknown])[] = [
  [
    "a line separator ends a comment for the engine",
    "# c\u2028privileged: true\nb: 2",
    { privileged: true, b: 2 },
  ],
  ["NEL breaks a plain value for the engine", "a: x\u0085  y", { a: "x y" }],
  ["a paragraph separator is refused even where the engine keeps it", 'a: "x\u2029y"', { a: "x\u2029y" }],
  ["\\' is an escape for the engine only", 'a: "x\\\'y"', { a: "x'y" }],
];

describe("kubeYamlToJson refuses text the engine reads differently", () => {
  const answers = engine(MISREAD.map(([, text]) => text));
  MISREAD.forEach(([name, text, engineJson], i) => {
    it(name, () => {
      expect(answers[i]).toEqual({ json: engineJson });
      expect("error" in ours(text)).toBe(true);
    });
  });
});

describe("kubeYamlToJson fails closed where the engine's choice is random", () => {
  it("keys of different types that spell the same text, with different values, are Unreadable", () => {
    const got = ours("1: a\n'1': b");
    expect("json" in got && (got.json as Record<string, unknown>)["1"]).toBeInstanceOf(Unreadable);
    // The engine keeps one of them (Go map order); both answers are possible.
    expect(["a", "b"]).toContain(
      (engine(["1: a\n'1': b"])[0] as { json: Record<string, unknown> }).json["1"],
    );
  });

  it("keys of different types with the same value are read", () => {
    expect(ours("1: a\n1.0: a\n'1': a")).toEqual({ json: { "1": "a" } });
  });
});

describe("kubeYamlToJson limits", () => {
  it("refuses an alias bomb like the engine", () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const next = String.fromCharCode(97 + i);
      lines.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(",")}]`);
    }
    const text = lines.join("\n");
    expect(ours(text)).toEqual({ error: "document contains excessive aliasing" });
    expect(engine([text])[0]).toEqual({ error: "yaml: document contains excessive aliasing" });
  });

  it("refuses nesting deeper than its cap with a clear error, without overflowing the stack", () => {
    const deep = `${"[".repeat(1500)}${"]".repeat(1500)}`;
    const got = ours(deep);
    expect("error" in got && got.error).toMatch(/nesting deeper than 1000 levels|not valid YAML/);
  });

  it("reads nesting within the cap", () => {
    const text = `${"[".repeat(500)}1${"]".repeat(500)}`;
    expect(ours(text)).toEqual(engine([text])[0]);
  });

  it("parseInput reports an engine error as not valid YAML with its line", () => {
    const parsed = parseInput(
      "pod.yaml",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  x: !!int abc\n",
    );
    expect(parsed.items).toEqual([]);
    expect(parsed.errors).toEqual([
      {
        location: { file: "pod.yaml", line: 1 },
        message: "not valid YAML: cannot decode !!str `abc` as a !!int (line 5)",
      },
    ]);
  });
});

describe("documents after blank and comment lines", () => {
  // A file that opened with one blank line once sent the engine-text check into an endless loop.
  it.each([
    "\napiVersion: v1\nkind: Pod\n",
    "\n\napiVersion: v1\nkind: Pod\n",
    "\n# c\n\napiVersion: v1\nkind: Pod\n",
    '\n{"apiVersion": "v1", "kind": "Pod"}',
    "#\n\napiVersion: v1\nkind: Pod\n",
  ])("%j is read", (src) => {
    const r = parseInput("x.yaml", src);
    expect(r.errors).toEqual([]);
    expect(r.items.map((i) => i.type)).toEqual(["kubernetes:core/v1:Pod"]);
  });
});
