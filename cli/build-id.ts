/**
 * Whether the toolkit runs from a released package or from a checkout, said in its version: a checkout's version is
 * `<package version>+unreleased.<commit>` (SemVer build metadata), so `--version`, SARIF and `--json` never pass an
 * unreleased build off as the last release. Read from the checkout's files (no process started: `scan` stays fast).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The commit a checkout at `root` is at (12 hex digits), `unknown` when it cannot be read, undefined for no checkout. */
export function checkoutCommit(root: string): string | undefined {
  const git = join(root, ".git");
  let head: string;
  try {
    head = readFileSync(join(git, "HEAD"), "utf8").trim();
  } catch {
    return undefined;
  }
  const short = (sha: string) => (/^[0-9a-f]{40}$/.test(sha) ? sha.slice(0, 12) : "unknown");
  const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
  if (ref === undefined) return short(head);
  try {
    return short(readFileSync(join(git, ref), "utf8").trim());
  } catch {
    // A packed ref: `<sha> <ref>` lines.
    try {
      const line = readFileSync(join(git, "packed-refs"), "utf8")
        .split("\n")
        .find((l) => l.endsWith(` ${ref}`));
      return short(line?.split(" ")[0] ?? "");
    } catch {
      return "unknown";
    }
  }
}

/** The version a build at `root` reports: the package's, with `+unreleased.<commit>` for a checkout. */
export function buildVersion(root: string, packageVersion: string): string {
  const commit = checkoutCommit(root);
  return commit === undefined ? packageVersion : `${packageVersion}+unreleased.${commit}`;
}
