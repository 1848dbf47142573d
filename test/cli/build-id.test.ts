/**
 * A build's version says whether it is released: a checkout's is `<version>+unreleased.<commit>`, read from its
 * `.git` (a branch ref, a packed ref or a detached head); a folder without `.git` (the installed package) keeps the
 * package's version as it is.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildVersion, checkoutCommit } from "../../cli/build-id";

const SHA = "0123456789abcdef0123456789abcdef01234567";

function checkout(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "build-id-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, ".git", name, ".."), { recursive: true });
    writeFileSync(join(root, ".git", name), text);
  }
  return root;
}

describe("the build's version", () => {
  it("is the package's own without a checkout", () => {
    const root = mkdtempSync(join(tmpdir(), "build-id-"));
    expect(checkoutCommit(root)).toBeUndefined();
    expect(buildVersion(root, "1.2.3")).toBe("1.2.3");
  });

  it("names a checkout's commit from a branch, a packed ref and a detached head", () => {
    const branch = checkout({ HEAD: "ref: refs/heads/main\n", "refs/heads/main": `${SHA}\n` });
    expect(buildVersion(branch, "1.2.3")).toBe("1.2.3+unreleased.0123456789ab");
    const packed = checkout({
      HEAD: "ref: refs/heads/main\n",
      "packed-refs": `# pack-refs\n${SHA} refs/heads/main\n`,
    });
    expect(checkoutCommit(packed)).toBe("0123456789ab");
    const detached = checkout({ HEAD: `${SHA}\n` });
    expect(checkoutCommit(detached)).toBe("0123456789ab");
  });

  it("says unknown for a checkout whose commit cannot be read, never a release's number alone", () => {
    const broken = checkout({ HEAD: "ref: refs/heads/gone\n" });
    expect(buildVersion(broken, "1.2.3")).toBe("1.2.3+unreleased.unknown");
  });
});
