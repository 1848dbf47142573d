// Whatever the text, reading it never throws and never hangs: every input ends as resources, skipped objects or
// input errors. Generated from the characters YAML and JSON give meaning to, in any order.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseInput } from "../../policy/sources/text/documents";

const PIECES = [
  "\n",
  "\r\n",
  " ",
  "  ",
  "\t",
  "---",
  "...",
  "#",
  "# c",
  "%YAML 1.1",
  "\ufeff",
  "\u2028",
  "\u0085",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  ": ",
  "- ",
  "? ",
  "&a ",
  "*a",
  "<<: ",
  "!!binary ",
  "!!str ",
  "!x ",
  "|",
  ">",
  '"',
  "'",
  "\\",
  "\\u0041",
  "apiVersion: v1",
  "kind: Pod",
  "services:",
  "steps:",
  "Image: x",
  "HostConfig:",
  "privileged: true",
  "1e3",
  "0x1",
  "~",
  "null",
  "y",
  "on",
  "\u0000",
  "é",
  "𝑥",
];

const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((xs) => xs.join(""));

describe("reading any text", () => {
  it.each(["in.yaml", "in.json", "compose.yaml"])("%s: never throws, never hangs", (file) => {
    fc.assert(
      fc.property(text, (src) => {
        const r = parseInput(file, src);
        expect(Array.isArray(r.items) && Array.isArray(r.skipped) && Array.isArray(r.errors)).toBe(true);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 400) },
    );
  });
});
