// The README is one screen and the rest of the documentation sits behind it: every relative link of the README and
// of docs/ leads to a file that exists, and every #anchor to a heading of that file.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");
const pages = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function anchor(heading: string): string {
  return heading
    .replace(/^#+\s*/, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set(
    text
      .split("\n")
      .filter((l) => /^#{1,6} /.test(l))
      .map(anchor),
  );
}

describe("the documentation's links", () => {
  it("keeps the README to one screen of getting started", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(60);
    for (const step of [
      "./sandbox up dev",
      "./sandbox run dev default",
      "./sandbox probe dev",
      "./sandbox off dev",
    ])
      expect(readme).toContain(step);
    expect(readme).toContain("docs/troubleshooting.md");
  });

  it.each(pages)("%s links only to files and headings that exist", (page) => {
    const file = join(ROOT, page);
    const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
    const broken: string[] = [];
    for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const target = m[1] ?? "";
      if (/^[a-z]+:/i.test(target)) continue;
      const [path = "", hash] = target.split("#");
      const to = path === "" ? file : resolve(dirname(file), path);
      if (!existsSync(to)) broken.push(`${target}: no such file`);
      else if (hash !== undefined && to.endsWith(".md") && !anchors(to).has(hash))
        broken.push(`${target}: no such heading`);
    }
    expect(broken).toEqual([]);
  });
});
