/**
 * The benchmarks' results as one chart a person can look at: every ratio against the raw tool (or, for the pack,
 * against the same preview without it) as a horizontal bar, 1× marked, each goal as a tick on its bar, read from
 * the JSON files the benchmarks wrote under bench/results/. Writes bench/results/summary.svg (a plain SVG, opened by
 * any browser) and prints the table the README shows. A result file that is missing leaves its bars out; one that
 * does not hold what its benchmark writes stops with its name.
 *   node --import tsx bench/chart.ts [--results bench/results] [--out bench/results/summary.svg]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fmt, ROOT, runBenchmark } from "./common";
import { option } from "./stats";

/** One bar: what was measured, its ratio, the goal (a ratio not to exceed), and the result file it came from. */
export interface Bar {
  readonly group: string;
  readonly label: string;
  readonly ratio: number;
  readonly goal?: number;
  readonly file: string;
}

type Doc = Record<string, unknown>;

function at(doc: Doc, file: string, path: string): number {
  let v: unknown = doc;
  for (const k of path.split(".")) v = typeof v === "object" && v !== null ? (v as Doc)[k] : undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${file}: no number at ${path}`);
  return v;
}

/** What each result file contributes, in the order the chart shows them. */
const SOURCES: readonly { file: string; bars: (d: Doc, f: string) => Omit<Bar, "file">[] }[] = [
  {
    file: "launch.json",
    bars: (d, f) => [
      {
        group: "launch vs docker run --rm",
        label: "./sandbox run",
        ratio: at(d, f, "ratios.frontToDockerRun"),
        goal: 1.2,
      },
      {
        group: "launch vs docker run --rm",
        label: "Launcher.run (cold)",
        ratio: at(d, f, "ratios.libraryToDockerRun"),
        goal: 0.9,
      },
    ],
  },
  {
    file: "pool.json",
    bars: (d, f) => [
      {
        group: "launch vs docker run --rm",
        label: "Launcher.run (pooled)",
        ratio: at(d, f, "ratioToDockerRun.pooled"),
        goal: 0.5,
      },
      // Written since the floor was measured: an older pool.json has none.
      ...(typeof (d.ratioToDockerRun as Doc | undefined)?.["engine floor"] === "number"
        ? [
            {
              group: "launch vs docker run --rm",
              label: "engine floor (start to removal)",
              ratio: at(d, f, "ratioToDockerRun.engine floor"),
            },
          ]
        : []),
    ],
  },
  {
    file: "concurrent-20.json",
    bars: (d, f) => [
      { group: "tasks at once vs docker run --rm", label: "20 tasks", ratio: at(d, f, "ratio") },
    ],
  },
  {
    file: "concurrent-100.json",
    bars: (d, f) => [
      { group: "tasks at once vs docker run --rm", label: "100 tasks", ratio: at(d, f, "ratio") },
    ],
  },
  {
    file: "off.json",
    bars: (d, f) => [
      {
        group: "off switch vs docker rm -f",
        label: "100 running",
        ratio: at(d, f, "ratios.running.offSwitch (concurrency 50)"),
        goal: 1.2,
      },
      {
        group: "off switch vs docker rm -f",
        label: "100 created",
        ratio: at(d, f, "ratios.created.offSwitch (concurrency 50)"),
        goal: 1.2,
      },
      {
        group: "off switch vs docker rm -f",
        label: "./sandbox off, 100 running",
        ratio: at(d, f, "ratios.running.sandbox off (CLI)"),
      },
      {
        group: "off switch vs docker rm -f",
        label: "./sandbox off, 100 created",
        ratio: at(d, f, "ratios.created.sandbox off (CLI)"),
        goal: 1.5,
      },
    ],
  },
  {
    file: "preview.json",
    bars: (d, f) =>
      Object.keys((d.results as Doc | undefined) ?? {}).map((n) => ({
        group: "preview with the pack vs without",
        label: `${n} containers`,
        ratio: at(d, f, `results.${n}.ratio`),
        ...(Number(n) >= 500 ? { goal: 1.2 } : {}),
      })),
  },
  {
    file: "updown.json",
    bars: (d, f) => [
      {
        group: "the front vs the Automation API",
        label: "up",
        ratio: at(d, f, "ratios.up.frontToAutomationApi"),
        goal: 1.3,
      },
      {
        group: "the front vs the Automation API",
        label: "destroy",
        ratio: at(d, f, "ratios.destroy.frontToAutomationApi"),
        goal: 1.3,
      },
    ],
  },
  {
    file: "runsc.json",
    bars: (d, f) => [
      {
        group: "gVisor launch vs docker run --runtime=runsc",
        label: "Launcher.run",
        ratio: at(d, f, "ratios.launcherRunscToDockerRunRunsc"),
      },
    ],
  },
  {
    file: "ledger.json",
    bars: (d, f) => [
      { group: "launch with the ledger vs without", label: "Launcher.run", ratio: at(d, f, "launch.ratio") },
    ],
  },
  {
    file: "kube-launch.json",
    bars: (d, f) => [
      {
        group: "Kubernetes launch to exit vs the bare client",
        label: "KubeLauncher.run",
        ratio: at(d, f, "ratio"),
        goal: 1.2,
      },
    ],
  },
  {
    // Absolute goals for this machine, each drawn as the share of its goal used (1× at the goal; lower is better).
    file: "kube-scale.json",
    bars: (d, f) => {
      const group = "scale: 4 launchers, 1,000 simulated nodes (share of the goal)";
      return [
        { group, label: "50 / tasks admitted per s", ratio: 50 / at(d, f, "admittedPerSecond"), goal: 1 },
        { group, label: "p99 admission / 250 ms", ratio: at(d, f, "admissionMs.p99") / 250, goal: 1 },
        { group, label: "API requests per task / 5", ratio: at(d, f, "apiRequestsPerTask") / 5, goal: 1 },
        { group, label: "launcher RSS / 200 MiB", ratio: at(d, f, "maxLauncherRssMiB") / 200, goal: 1 },
      ];
    },
  },
];

/** Every bar the result files in `dir` give. */
export function barsFrom(dir: string): Bar[] {
  return SOURCES.flatMap(({ file, bars }) => {
    const path = join(dir, file);
    if (!existsSync(path)) return [];
    let doc: Doc;
    try {
      doc = JSON.parse(readFileSync(path, "utf8")) as Doc;
    } catch (e) {
      throw new Error(`${path}: not JSON (${(e as Error).message})`);
    }
    return bars(doc, file).map((b) => ({ ...b, file }));
  });
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The chart as SVG text: one row a bar, grouped, on a linear scale from 0 to a little past the largest value. */
export function chartSvg(bars: readonly Bar[], title: string): string {
  const rowH = 22;
  const left = 330;
  const width = 900;
  const plotW = width - left - 90;
  const max = Math.max(1.5, ...bars.map((b) => Math.max(b.ratio, b.goal ?? 0))) * 1.08;
  const x = (v: number) => left + (v / max) * plotW;
  const rows: string[] = [];
  let y = 50;
  let group = "";
  for (const b of bars) {
    if (b.group !== group) {
      group = b.group;
      y += 8;
      rows.push(`<text x="12" y="${y + 14}" font-weight="bold">${esc(group)}</text>`);
      y += rowH;
    }
    const met = b.goal === undefined || b.ratio <= b.goal;
    const fill = b.goal === undefined ? "#6b8fb5" : met ? "#4c9a5b" : "#c2543d";
    rows.push(
      `<text x="28" y="${y + 15}">${esc(b.label)}</text>`,
      `<rect x="${left}" y="${y + 3}" width="${(x(b.ratio) - left).toFixed(1)}" height="${rowH - 6}" fill="${fill}"/>`,
      `<text x="${(x(b.ratio) + 6).toFixed(1)}" y="${y + 15}">${fmt(b.ratio, 2)}×${b.goal === undefined ? "" : ` (goal ≤ ${b.goal}×)`}</text>`,
    );
    if (b.goal !== undefined) {
      const gx = x(b.goal).toFixed(1);
      rows.push(`<line x1="${gx}" x2="${gx}" y1="${y}" y2="${y + rowH}" stroke="#222" stroke-width="2"/>`);
    }
    y += rowH;
  }
  const one = x(1).toFixed(1);
  const height = y + 40;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="26" font-size="16" font-weight="bold">${esc(title)}</text>`,
    `<line x1="${one}" x2="${one}" y1="44" y2="${y}" stroke="#999" stroke-dasharray="4 3"/>`,
    `<text x="${one}" y="${y + 16}" text-anchor="middle" fill="#555">1× (the raw tool)</text>`,
    ...rows,
    `<text x="12" y="${y + 32}" fill="#555">green: goal met; red: goal missed; blue: no goal. Lower is faster. Ticks: goals.</text>`,
    "</svg>",
    "",
  ].join("\n");
}

/** The README's table of the same bars. */
export function chartTable(bars: readonly Bar[]): string {
  const lines = ["| benchmark | measured | ratio | goal |", "| --- | --- | --- | --- |"];
  for (const b of bars) {
    const goal = b.goal === undefined ? "" : `≤ ${b.goal}× (${b.ratio <= b.goal ? "met" : "missed"})`;
    lines.push(`| ${b.group} | ${b.label} | ${fmt(b.ratio, 2)}× | ${goal} |`);
  }
  return lines.join("\n");
}

if (require.main === module) {
  runBenchmark(async () => {
    const argv = process.argv.slice(2);
    const dir = option(argv, "--results") ?? join(ROOT, "bench", "results");
    const out = option(argv, "--out") ?? join(dir, "summary.svg");
    const bars = barsFrom(dir);
    if (bars.length === 0)
      throw new Error(`${dir}: no benchmark results to chart (run the benchmarks first)`);
    writeFileSync(
      out,
      chartSvg(bars, "Sandbox projects: each hot path against the raw tool, measured in one run"),
    );
    console.log(chartTable(bars));
    console.log(`written to ${out}`);
  });
}
