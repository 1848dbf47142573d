/**
 * Benchmark: start-up of the installed scanner. `sandbox-scan` of one small manifest, as the package runs it (the
 * compiled dist/cli/bin/sandbox-scan.js on Node, no TypeScript at start-up), against `trivy config` of the same file,
 * alternating, median of `runs`; and the checkout's `tsx cli/scan.ts` for reference (what `./sandbox scan` runs).
 * The target is under 0.5 s for sandbox-scan on this machine. Not a test: it prints, and asserts nothing.
 *   node --import tsx bench/startup.ts [runs=15]
 * Builds the package into dist/ first (scripts/build-package.mjs) and Trivy once (bench/setup-trivy.sh).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmt, median, ROOT, type Timed, timed } from "./common";

const runs = Number(process.argv[2] ?? 15);
const TARGET_SECONDS = 0.5;

function trivyBinary(): string {
  const r = spawnSync("bash", [join(ROOT, "bench", "setup-trivy.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const path = r.stdout.trim().split("\n").at(-1) ?? "";
  if (r.status !== 0 || !existsSync(path))
    throw new Error(`bench/setup-trivy.sh failed (exit ${r.status}): Trivy is the peer`);
  return path;
}

const node = join(ROOT, "node_modules", ".bin", "node");
const build = spawnSync(node, [join(ROOT, "scripts", "build-package.mjs")], { stdio: "inherit" });
if (build.status !== 0) throw new Error("the package build failed");
const trivy = trivyBinary();
// A build from the module proxy says `Version: dev`; its cache folder names the version.
const version = `Trivy ${/\/v([^/]+)\/bin\/trivy$/.exec(trivy)?.[1] ?? "(unknown version)"}`;

const dir = mkdtempSync(join(tmpdir(), "sandbox-bench-startup-"));
const file = join(dir, "pod.yaml");
writeFileSync(
  file,
  [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    "  name: web",
    "spec:",
    "  containers:",
    "    - name: web",
    "      image: nginx:1.27",
    "      ports:",
    "        - containerPort: 80",
    "          hostPort: 8080",
    "",
  ].join("\n"),
);

// Trivy at its fastest for this input: its embedded checks (no bundle download), no version check or telemetry
// (nothing leaves the machine), the Kubernetes scanner only, and a cache of its own in the run's folder.
const trivyCache = join(dir, "trivy-cache");
const commands: Record<string, [string, string[]]> = {
  "sandbox-scan (compiled)": [
    node,
    [join(ROOT, "dist", "cli", "bin", "sandbox-scan.js"), "--format", "json", file],
  ],
  "trivy config": [
    trivy,
    [
      "config",
      "--quiet",
      "--skip-check-update",
      "--skip-version-check",
      "--disable-telemetry",
      "--misconfig-scanners",
      "kubernetes",
      "--cache-dir",
      trivyCache,
      "--format",
      "json",
      file,
    ],
  ],
  "tsx cli/scan.ts (checkout)": [
    node,
    ["--import", "tsx", join(ROOT, "cli", "scan.ts"), "--format", "json", file],
  ],
};

// One warm-up each: Node's compile cache and the OS's file cache, Trivy's check bundle.
for (const [cmd, args] of Object.values(commands)) timed(cmd, args, [0, 1]);
const times: Record<string, Timed[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
for (let i = 0; i < runs; i++) {
  for (const [name, [cmd, args]] of Object.entries(commands)) times[name]?.push(timed(cmd, args, [0, 1]));
}

const load = spawnSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).stdout.trim();
console.log(
  `start-up of one small manifest, median of ${runs} alternating runs (load ${load}); peer: ${version}`,
);
const medians: Record<string, number> = {};
for (const [name, t] of Object.entries(times)) {
  medians[name] = median(t.map((x) => x.seconds));
  const rss = median(t.map((x) => x.maxRssMiB));
  console.log(`  ${name.padEnd(28)} ${fmt(medians[name] ?? 0, 2)} s   peak RSS ${fmt(rss, 0)} MiB`);
}
const ours = medians["sandbox-scan (compiled)"] ?? 0;
const peer = medians["trivy config"] ?? 0;
console.log(
  `sandbox-scan / trivy config: ${fmt(ours / peer, 2)}; target under ${TARGET_SECONDS} s: ${ours < TARGET_SECONDS ? "met" : "missed"}`,
);
