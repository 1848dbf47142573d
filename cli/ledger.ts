/**
 * The ledger as the front uses it: one file per project on the machine (cli/ledger-file.ts), its alerts on the configured
 * sinks, and the verbs that read it: `spend`, `audit` and `alerts`.
 */
import { existsSync } from "node:fs";
import { type ResolvedProject, SpecError, usdFine } from "../components/model";
import { deployedShape, lowersOnly, projectShape, recordDeployed } from "../runtime/deployed-shape";
import {
  type AlertRecord,
  isLedgerProblem,
  isLedgerUrl,
  Ledger,
  type LedgerOptions,
  meterOf,
  type RunRecord,
  type SpendReport,
} from "../runtime/ledger";
import { AlertOutbox, alertSinks } from "../runtime/ledger/alerts";
import { openLedger as openWitnessed } from "../runtime/ledger/open";
import { deadRuns } from "../runtime/ledger/reconcile";
import { LedgerGone, resetWitness } from "../runtime/ledger/witness";
import type { LedgerVerb } from "./ledger-file";
import { type Io as FrontIo, Reporter } from "./output";

/** How a person starts a new ledger on purpose. */
const RESET = "sandbox ledger reset <stack>";

/**
 * Opens a project's ledger, only when it is the ledger the project has been metered with (runtime/ledger/witness.ts:
 * a deleted, emptied or replaced file, or a second ledger of the same project, throws {@link LedgerGone}).
 */
export function openProjectLedger(
  file: string,
  project: ResolvedProject,
  options: LedgerOptions = {},
  warn: (text: string) => void = () => undefined,
): Promise<Ledger> {
  return openWitnessed(meterOf(project), { ...options, jobRoot: project.jobRoot, file, reset: RESET, warn });
}

/**
 * Opens a project's ledger with its alert sinks (stderr through `err`) and reconciles the runs a dead launcher left
 * open ({@link reconcileOnOpen}); `outbox` holds webhooks in flight.
 */
export async function openLedger(
  file: string,
  project: ResolvedProject,
  err: (text: string) => void,
): Promise<{ ledger: Ledger; outbox: AlertOutbox }> {
  const outbox = new AlertOutbox();
  const ledger = await openProjectLedger(
    file,
    project,
    { sinks: alertSinks(project.spec.alerts, outbox, err) },
    err,
  );
  await reconcileOnOpen(ledger, project, err);
  return { ledger, outbox };
}

/**
 * Every front verb that opens a project's ledger reconciles first the runs a launcher that died left open
 * (runtime/ledger/reconcile.ts): stopped, charged what they ran and removed. The engine is reached only when there are any;
 * without one they stay open and a warning says so. `note` gets one line per run closed.
 */
export async function reconcileOnOpen(
  ledger: Ledger,
  project: ResolvedProject,
  warn: (text: string) => void,
  note?: (text: string) => void,
): Promise<void> {
  if ((await deadRuns(ledger)).length === 0) return;
  const { reconcileOrphans } = await import("../runtime/orphans.js");
  for (const r of await reconcileOrphans(ledger, project.jobRoot, warn)) {
    note?.(
      `note: run ${r.id} (template ${r.template}) was left open by a launcher that died; reconciled and charged ${usdFine(r.chargeUsd ?? 0)} (\`alerts\` says how)\n`,
    );
  }
}

/**
 * The ledger's refusal of `up` when the project's spend is at its cap (no ledger at `file` yet: none), after
 * reconciling the runs a dead launcher left open (their charges count).
 */
export async function upRefusal(
  file: string,
  project: ResolvedProject,
  warn: (text: string) => void,
): Promise<string | undefined> {
  if (!isLedgerUrl(file) && !existsSync(file)) return undefined;
  const ledger = await Ledger.at(file, meterOf(project));
  try {
    await reconcileOnOpen(ledger, project, warn, warn);
    const refusal = await ledger.upRefusal();
    if (refusal === undefined) return undefined;
    // At the cap, an `up` that only lowers what the project may spend or run deploys, like the hard stop.
    const before = await deployedShape(ledger, project.spec.name);
    if (before !== undefined && lowersOnly(projectShape(project), before)) {
      warn(
        `note: project "${project.spec.name}" is at its monthly cap; this up only lowers what it may spend or run, so it deploys\n`,
      );
      return undefined;
    }
    return refusal;
  } finally {
    await ledger.close();
  }
}

/** After a successful `up`: what it deployed, for the next `up` at the cap to compare with. Never fails the verb. */
export async function recordUp(
  file: string,
  project: ResolvedProject,
  warn: (text: string) => void,
): Promise<void> {
  try {
    const ledger = await openProjectLedger(file, project, {}, warn);
    try {
      await recordDeployed(ledger, project);
    } finally {
      await ledger.close();
    }
  } catch (e) {
    warn(
      `warning: what this up deployed was not recorded in the ledger ${file}: ${e instanceof Error ? e.message : String(e)}\n`,
    );
  }
}

/**
 * `sandbox ledger reset <stack>`: the ledger at `file` (made when missing) becomes the one the project is metered
 * with, and the one before is no longer; its history is not deleted. Returns what to print.
 */
export async function resetLedger(file: string, project: ResolvedProject): Promise<string> {
  const ledger = await Ledger.at(file, meterOf(project));
  try {
    const id = await ledger.id();
    const before = resetWitness(project.jobRoot, project.spec.name, file, id);
    const was =
      before === undefined
        ? "no ledger was witnessed before"
        : before.ledgerId === id
          ? "it already was"
          : `the one before (${before.file}, since ${before.since}) is no longer metered; its file, if any, is left as it is`;
    return `project ${project.spec.name}: the ledger ${file} (${(await ledger.runs()).length} runs) is the one it is metered with from now on; ${was}\n`;
  } finally {
    await ledger.close();
  }
}

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Bad arguments of a ledger verb. */
class LedgerUsage extends Error {}

/** `--since`: an ISO date or time, or a span back from now (`30m`, `12h`, `7d`). */
export function parseSince(value: string, now = Date.now()): number {
  const span = /^(\d+)([smhd])$/.exec(value);
  if (span) {
    const unit = { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[span[2] as "s" | "m" | "h" | "d"];
    return now - Number(span[1]) * unit;
  }
  const t = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(t)) {
    throw new LedgerUsage(
      `--since "${value}": expected an ISO date or time (2026-12-01, 2026-12-01T10:00:00Z) or a span back from now (30m, 12h, 7d)`,
    );
  }
  return t;
}

function options(verb: LedgerVerb, rest: readonly string[]): { since?: number; agent?: string } {
  const allowed = verb === "audit" ? ["--since", "--agent"] : verb === "alerts" ? ["--since"] : [];
  const out: { since?: number; agent?: string } = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? "";
    const eq = arg.indexOf("=");
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (!allowed.includes(flag)) {
      throw new LedgerUsage(
        `unknown argument "${arg}" for ${verb}; allowed: ${[...allowed, "--json"].join(", ")}`,
      );
    }
    const value = eq === -1 ? rest[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "") throw new LedgerUsage(`${flag} needs a value`);
    if (flag === "--since") out.since = parseSince(value);
    else out.agent = value;
  }
  return out;
}

const pct = (f: number) => `${Math.round(f * 1000) / 10} %`;

function spendText(s: SpendReport): string {
  const lines = [
    `project ${s.project}, ${s.month} (UTC), budget ${s.enforce}: spent ${usdFine(s.spentUsd)} of ${usdFine(s.runsCapUsd)} for runs (${pct(s.fraction)}), ${usdFine(s.leftUsd)} left; forecast for the month at this rate ${usdFine(s.forecastUsd)}`,
    `  cap ${usdFine(s.capUsd)}${s.fixedUsd > 0 ? `, of which ${usdFine(s.fixedUsd)} for what runs all month (the proxy)` : ""}; ${s.runs} run(s), ${s.open} running`,
  ];
  for (const [what, by] of [
    ["template", s.byTemplate],
    ["agent", s.byAgent],
  ] as const) {
    for (const [k, v] of Object.entries(by).sort(([a], [b]) => (a < b ? -1 : 1))) {
      lines.push(`  ${what} ${k}: ${usdFine(v)}`);
    }
  }
  if (s.blocked)
    lines.push("  AT THE CAP: new launches and `up` are refused until the cap is raised or the month turns");
  return `${lines.join("\n")}\n`;
}

function runText(r: RunRecord): string {
  const when = new Date(r.admittedAt).toISOString();
  const took = r.endedAt === null ? "running" : `${((r.endedAt - r.admittedAt) / 1000).toFixed(1)} s`;
  const files = Object.entries(r.files);
  const denied = r.egress.filter((d) => (d as { decision?: string }).decision === "denied").length;
  return (
    `${when} run ${r.id} template ${r.template}${r.agent === null ? "" : ` agent ${r.agent}`}: ${r.status}, exit ${r.exitCode ?? "-"}, ${took}, ${usdFine(r.chargeUsd ?? 0)}` +
    `${r.limits.length ? `, limits ${r.limits.join(",")}` : ""}${r.killedByLauncher ? ", killed by the launcher" : ""}` +
    `${r.stoppedBy === null ? "" : `, stopped (${r.stoppedBy})`}${r.error === null ? "" : `, error: ${r.error}`}\n` +
    `  command: ${JSON.stringify(r.command)}\n` +
    (files.length ? `  files: ${files.map(([p, h]) => `${p} sha256:${h.slice(0, 16)}`).join(", ")}\n` : "") +
    (r.egress.length
      ? `  egress: ${r.egress.length} request(s), ${denied} refused: ${egressText(r.egress)}\n`
      : "") +
    (r.broker.length ? `  broker: ${brokerCallsText(r.broker)}\n` : "")
  );
}

/** The proxy's decisions of a run in a line: `allowed GET pypi.org:443, denied GET evil.test:80 (why)`. */
function egressText(decisions: readonly unknown[]): string {
  return decisions
    .map((d) => d as { decision?: string; method?: string; host?: string; port?: number; reason?: string })
    .map((d) =>
      `${d.decision ?? "-"} ${d.method ?? ""} ${d.host ?? ""}:${d.port ?? ""}${d.decision === "denied" && d.reason ? ` (${d.reason})` : ""}`
        .replace(/ +/g, " ")
        .trim(),
    )
    .join(", ");
}

/** The broker's calls of a run in a line: `gh GET /gh/user 200, gh POST /gh/x 405`. */
function brokerCallsText(calls: readonly unknown[]): string {
  return calls
    .map((c) => c as { route?: string; method?: string; path?: string; status?: number })
    .map((c) =>
      `${c.route ?? "-"} ${c.method ?? ""} ${c.path ?? ""} ${c.status ?? ""}`.replace(/ +/g, " ").trim(),
    )
    .join(", ");
}

function alertText(a: AlertRecord): string {
  return `${new Date(a.at).toISOString()} ${a.kind}: ${a.message}\n`;
}

/**
 * Runs `spend`, `audit` or `alerts` on a project's ledger, after reconciling the runs a dead launcher left open.
 * Exit 0, or 2 for bad arguments; never throws.
 */
export async function runLedgerVerb(
  verb: LedgerVerb,
  stack: string,
  project: ResolvedProject,
  rest: readonly string[],
  file: string,
  io: Io,
  json: boolean,
): Promise<number> {
  let opts: { since?: number; agent?: string };
  try {
    opts = options(verb, rest);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (json) {
      io.out(
        `${JSON.stringify({ verb, stack, ok: false, exitCode: 2, error: { kind: "bad-input", message } })}\n`,
      );
    } else io.err(`${message}\n`);
    return 2;
  }
  const failed = (e: unknown) => {
    if (!(e instanceof LedgerGone) && !isLedgerProblem(e)) throw e;
    if (json)
      io.out(
        `${JSON.stringify({ verb, stack, ok: false, exitCode: 1, error: { kind: "ledger", message: e.message } })}\n`,
      );
    else io.err(`${e.message}\n`);
    return 1;
  };
  let ledger: Ledger;
  try {
    ledger = await openProjectLedger(file, project, {}, io.err);
  } catch (e) {
    return failed(e);
  }
  try {
    await reconcileOnOpen(ledger, project, io.err, io.err);
    const head = { verb, stack, ok: true, exitCode: 0, project: project.spec.name, ledger: file };
    if (verb === "spend") {
      const s = await ledger.spend();
      io.out(json ? `${JSON.stringify({ ...head, spend: s })}\n` : spendText(s));
    } else if (verb === "audit") {
      const runs = await ledger.runs(opts);
      io.out(json ? `${JSON.stringify({ ...head, runs })}\n` : runs.map(runText).join("") || "no runs\n");
    } else {
      const alerts = await ledger.alerts(opts.since === undefined ? {} : { since: opts.since });
      io.out(
        json ? `${JSON.stringify({ ...head, alerts })}\n` : alerts.map(alertText).join("") || "no alerts\n",
      );
    }
    return 0;
  } catch (e) {
    return failed(e);
  } finally {
    await ledger.close();
  }
}

/** What `sandbox ledger <sub>` is given by the front. */
export interface LedgerCommandContext {
  readonly io: FrontIo;
  readonly json: boolean;
  readonly yes: boolean;
  /** Reads a stack's config; throws SpecError. */
  readonly load: (stack: string) => ResolvedProject;
  /** The ledger file of a project. */
  readonly file: (stack: string, project: ResolvedProject) => string;
  /** The project's SQLite file on this machine, whatever URL is configured (what `copy` copies by default). */
  readonly localFile: (stack: string, project: ResolvedProject) => string;
  /** The checkout's folder (the local server's data is under its `.sandbox/`). */
  readonly root: string;
}

/**
 * `sandbox ledger reset <stack>`: a new ledger, started on purpose (asks on a terminal unless --yes); `copy` and
 * `local`, the shared ledger's verbs, are cli/ledger-shared.ts's.
 */
export async function runLedgerCommand(
  sub: string | undefined,
  rest: readonly string[],
  c: LedgerCommandContext,
): Promise<number> {
  if (sub === "copy") return (await import("./ledger-shared.js")).ledgerCopyVerb(rest, c);
  if (sub === "local") return (await import("./ledger-shared.js")).ledgerLocalVerb(rest, c);
  const rep = new Reporter(c.io, c.json, false);
  const [stack, ...extra] = rest;
  const fail = (message: string) =>
    rep.failure({
      verb: "ledger",
      stack: stack ?? "",
      ok: false,
      exitCode: 2,
      error: { kind: "bad-input", message },
    });
  if (sub !== "reset" || stack === undefined || extra.length > 0)
    return fail(
      "usage: sandbox ledger reset <stack> [--yes], sandbox ledger copy <stack> [--to <url>] [--from <file>], or sandbox ledger local <stack> [--stop] (`sandbox ledger --help`)",
    );
  let project: ResolvedProject;
  try {
    project = c.load(stack);
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    return fail(e.message);
  }
  if (!c.yes && c.io.ask !== undefined && !c.json) {
    const answer = await c.io.ask(
      `ledger reset ${stack}: meter project ${project.spec.name} from a new ledger, from zero? [y/N] `,
    );
    if (!["y", "yes"].includes(answer.trim().toLowerCase())) {
      c.io.err("ledger reset: not confirmed; nothing was done (--yes skips the question)\n");
      return 2;
    }
  }
  const file = c.file(stack, project);
  const text = await resetLedger(file, project);
  return rep.result(
    { verb: "ledger", stack, ok: true, exitCode: 0, project: project.spec.name, ledger: file },
    text,
  );
}
