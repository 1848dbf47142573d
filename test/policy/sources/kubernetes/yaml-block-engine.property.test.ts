// The plain block reader (policy/sources/kubernetes/yaml-block.ts) against the engine itself (sigs.k8s.io/yaml
// YAMLToJSON over go-yaml v2, the kube-yaml oracle): every generated document the block reader takes, it reads to the
// engine's value; the engine refuses none of them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readBlockYaml } from "../../../../policy/sources/kubernetes/yaml-block";
import { layout, tree, write } from "./yaml-block-documents";
import { engine } from "./yaml-oracle";

describe("the plain block reader reads what the engine reads", () => {
  it("the engine's value for every generated document it takes", () => {
    const taken = fc
      .sample(fc.tuple(tree, layout), { seed: 5151, numRuns: 4000 })
      .map(([root, choices]) => write(root, choices))
      .flatMap((text) => {
        const block = readBlockYaml(text);
        return block === undefined ? [] : [{ text, json: block.value }];
      });
    expect(taken.length).toBeGreaterThan(300);
    const answers = engine(taken.map((t) => t.text));
    taken.forEach(({ text, json }, i) => {
      expect({ text, reading: answers[i] }).toEqual({ text, reading: { json } });
    });
  });
});
