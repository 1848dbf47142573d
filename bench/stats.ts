/** The summaries and option reading the benchmarks share. */
import { median } from "./common";

/** The value after `--name` on a command line, if any. */
export function option(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
}

/** The q-quantile (nearest rank) of `xs`. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? 0;
}

/** Runs, min, median and p95 of wall times in seconds. */
export function summary(seconds: readonly number[]) {
  return {
    runs: seconds.length,
    minSeconds: Math.min(...seconds),
    medianSeconds: median(seconds),
    p95Seconds: quantile(seconds, 0.95),
  };
}
