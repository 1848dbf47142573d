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
import { layout, tree, write } from "./yaml-block-documents";
import { ours } from "./yaml-reading";

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
