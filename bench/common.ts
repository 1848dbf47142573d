/** Shared pieces of the benchmarks: the OPA peer, timing with peak memory, medians, printing. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export const ROOT = resolve(__dirname, "..");
export const REGO = join(ROOT, "bench", "peer", "sandbox.rego");
export const OPA_VERSION = "1.22.3";

/** The budget of the benchmarks' own projects: one task at a time, the dev stack's prices, a $10 cap. */
export const ONE_TASK_BUDGET = {
  monthlyCapUsd: 10,
  usdPerVcpuHour: 0.004,
  usdPerGbHour: 0.002,
  hoursPerMonth: 730,
  maxConcurrentTasks: 1,
} as const;

/** The OPA CLI, built (once, then cached) by bench/setup-opa.sh. */
export function opaBinary(): string {
  const r = spawnSync("bash", [join(ROOT, "bench", "setup-opa.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const path = r.stdout.trim().split("\n").at(-1) ?? "";
  if (r.status !== 0 || !existsSync(path))
    throw new Error(`bench/setup-opa.sh failed (exit ${r.status}): OPA is the peer`);
  return path;
}

export interface Timed {
  readonly seconds: number;
  /** Peak resident memory of the process, in MiB. */
  readonly maxRssMiB: number;
  readonly stdout: string;
}

/** Runs a command under GNU time: wall seconds and peak RSS. Throws when it fails. */
export function timed(cmd: string, args: readonly string[], okCodes: readonly number[] = [0]): Timed {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M", cmd, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  const last = r.stderr.trim().split("\n").at(-1) ?? "";
  const m = /^([\d.]+) (\d+)$/.exec(last);
  if (m === null || !okCodes.includes(r.status ?? -1)) {
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status}):\n${r.stderr.slice(-2000)}`);
  }
  return { seconds: Number(m[1]), maxRssMiB: Number(m[2]) / 1024, stdout: r.stdout };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

export function fmt(n: number, digits = 1): string {
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** `a/b` as `2.3× faster` / `1.7× slower` wording for the first party. */
export function ratio(label: string, ours: number, peer: number, higherIsBetter: boolean): string {
  const r = ours / peer;
  const better = higherIsBetter ? r >= 1 : r <= 1;
  const x = r >= 1 ? r : 1 / r;
  return `${label}: ${fmt(r, 2)} (scan/rules core ${better ? "ahead by" : "behind by"} ${fmt(x, 2)}×)`;
}

/** `workload name\0rule id` pairs. */
export type Pairs = Set<string>;

export function agreement(ours: Pairs, peer: Pairs, rules: ReadonlySet<string>): string {
  const mine = new Set([...ours].filter((p) => rules.has(p.split("\0")[1] ?? "")));
  const both = [...mine].filter((p) => peer.has(p)).length;
  const onlyOurs = mine.size - both;
  const onlyPeer = [...peer].filter((p) => !mine.has(p)).length;
  return `same findings: ${both} (workload, rule) pairs in both; ${onlyOurs} only in ours, ${onlyPeer} only in the peer's (over the ${rules.size} rules the Rego mirrors)`;
}

/** The rule ids the Rego peer mirrors (each `"rule": "<id>"` in it). */
export function regoRuleIds(): Set<string> {
  return new Set([...readFileSync(REGO, "utf8").matchAll(/"rule": "([a-z-]+)"/g)].map((m) => m[1] ?? ""));
}

/** Where the two disagree, by rule: `rule: +ours -peer`. */
export function disagreements(ours: Pairs, peer: Pairs, rules: ReadonlySet<string>): string[] {
  const by = new Map<string, [number, number]>();
  const bump = (p: string, i: 0 | 1) => {
    const rule = p.split("\0")[1] ?? "";
    if (!rules.has(rule)) return;
    const e = by.get(rule) ?? [0, 0];
    e[i]++;
    by.set(rule, e);
  };
  for (const p of ours) if (!peer.has(p)) bump(p, 0);
  for (const p of peer) if (!ours.has(p)) bump(p, 1);
  return [...by].map(([r, [a, b]]) => `${r}: ${a} only in ours, ${b} only in the peer's`);
}

/** Writes a benchmark's result as JSON at `out` (its folder made when missing); nothing when `out` is undefined. */
export function writeResult(out: string | undefined, doc: unknown): void {
  if (out === undefined) return;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
}

/** The run main of a benchmark: its failure as one line on stderr and exit code 1, never a stack trace. */
export function runBenchmark(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  });
}
