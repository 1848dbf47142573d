import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { LaunchSpec } from "../../components/model";

/**
 * Starts a process of its own (Node with tsx, no wrapper between, so a SIGKILL to it is a crash) that warms a pool
 * of `size` for `spec` and holds it forever: what a runtime killed with its members waiting leaves.
 */
export function spawnPoolHolder(spec: LaunchSpec, size: number): ChildProcess {
  const dir = mkdtempSync(join(tmpdir(), "pool-holder-"));
  writeFileSync(join(dir, "spec.json"), JSON.stringify(spec));
  const root = resolve(__dirname, "..", "..");
  const at = (path: string) => JSON.stringify(join(root, path));
  writeFileSync(
    join(dir, "holder.ts"),
    [
      `import { readFileSync } from "node:fs";`,
      `import { dockerClient } from ${at("runtime/docker/client")};`,
      `import { WarmPool } from ${at("runtime/pool")};`,
      `import { policyPreflight } from ${at("runtime/preflight")};`,
      `const spec = JSON.parse(readFileSync(${JSON.stringify(join(dir, "spec.json"))}, "utf8"));`,
      `void new WarmPool(dockerClient(), { size: ${size}, preflight: policyPreflight() }).warm(spec);`,
      "setInterval(() => undefined, 1000);",
    ].join("\n"),
  );
  return spawn(process.execPath, ["--import", "tsx", join(dir, "holder.ts")], { cwd: root, stdio: "ignore" });
}
