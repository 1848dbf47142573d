/**
 * Scans files given as raw bytes (the shared harness writes text as UTF-8, which cannot make a UTF-16 file), with
 * the same public report shape and verdict assertion as the first acceptance harness (harness.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { scanJson } from "../scan/helpers";
import { assertVerdict, type Expect, type ScanResult } from "./harness";

export async function scanBytes(files: Readonly<Record<string, Buffer | string>>): Promise<ScanResult> {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-scan-r2-"));
  try {
    for (const [name, data] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), data);
    }
    const { code, report } = await scanJson(["."], undefined, dir);
    return { code, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function bytesVerdict(
  files: Readonly<Record<string, Buffer | string>>,
  want: Expect,
): Promise<void> {
  assertVerdict(await scanBytes(files), want);
}

/** The text as UTF-16 little-endian with its byte-order mark, as Windows editors save it. */
export function utf16le(text: string): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
}
