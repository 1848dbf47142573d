// The quick-starts (docs/quickstart-*.md) as the consumer test runs them: each fenced block whose info string says
// `file=<path>` is a file the reader writes, each `sh test` block is commands the reader runs (`exit=<n>`: the status
// they end with; a `text stdout` block right after it: what they print). Other blocks are read, not run: the test
// says how it covers each of them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./tarball";

export interface QuickstartFile {
  readonly path: string;
  readonly content: string;
}

export interface QuickstartCommand {
  readonly script: string;
  readonly exit: number;
  /** What the commands print on stdout, when the quick-start shows it. */
  readonly stdout?: string;
}

export interface Quickstart {
  readonly files: readonly QuickstartFile[];
  readonly commands: readonly QuickstartCommand[];
  /** Every block's info string and content, in order (for checks on the blocks that are only shown). */
  readonly blocks: readonly { readonly info: string; readonly content: string }[];
}

/** Reads `docs/quickstart-<name>.md`. */
export function quickstart(name: string): Quickstart {
  const text = readFileSync(join(ROOT, "docs", `quickstart-${name}.md`), "utf8");
  const blocks = [...text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    info: (m[1] ?? "").trim(),
    content: m[2] ?? "",
  }));
  const files: QuickstartFile[] = [];
  const commands: QuickstartCommand[] = [];
  blocks.forEach((b, i) => {
    const words = b.info.split(/\s+/);
    const file = words.find((w) => w.startsWith("file="));
    if (file !== undefined) files.push({ path: file.slice("file=".length), content: b.content });
    if (words[0] === "sh" && words.includes("test")) {
      const exit = Number(words.find((w) => w.startsWith("exit="))?.slice("exit=".length) ?? 0);
      const next = blocks[i + 1];
      commands.push({
        script: b.content,
        exit,
        ...(next?.info === "text stdout" ? { stdout: next.content } : {}),
      });
    }
  });
  return { files, commands, blocks };
}
