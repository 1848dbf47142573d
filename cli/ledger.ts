/**
 * The ledger as the front uses it: one file per project on the machine (cli/ledger-file.ts), its alerts on the configured
 * sinks, and the verbs that read it: `spend`, `audit` and `alerts`.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
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
import { type CopyCount, CopyRefused, copyLedger } from "../runtime/ledger/copy";
import { openLedger as openWitnessed } from "../runtime/ledger/open";
import { deadRuns } from "../runtime/ledger/reconcile";
import { LedgerGone, resetWitness } from "../runtime/ledger/witness";
import { ledgerUrlProblem } from "../stacks/config";
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

/**
 * `sandbox ledger copy <stack> --to <url>`: the project's history in its SQLite file at `from` copied into the shared
 * ledger at `to` (runtime/ledger/copy.ts), which then becomes the one the project is metered with. The file is left as
 * it is. Returns what to print.
 */
export async function copyProjectLedger(
  from: string,
  to: string,
  project: ResolvedProject,
): Promise<{ text: string; count: CopyCount }> {
  if (!existsSync(from))
    throw new CopyRefused(`there is no ledger file at ${from} to copy from (--from names another)`);
  const meter = meterOf(project);
  const source = await Ledger.open(from, meter);
  try {
    const target = await Ledger.at(to, meter);
    try {
      const count = await copyLedger(source.store, target.store, project.spec.name);
      const before = resetWitness(project.jobRoot, project.spec.name, to, await target.id());
      const spend = await target.spend();
      return {
        count,
        text:
          `project ${project.spec.name}: copied ${count.runs} runs, ${count.alerts} alerts, ${count.agentKeys} agent keys and ${count.deployed === 0 ? "no" : "the last"} deployed shape from ${from} to ${target.file}; ` +
          `month to date there: ${usdFine(spend.spentUsd)} spent. It is the ledger the project is metered with from now on` +
          `${before === undefined || before.file === from ? "" : ` (until now: ${before.file})`}; ${from} is left as it is.
` +
          `Set sandbox:ledger: { url: ${to} } in the stack's config so that every launcher meters there.
`,
      };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** `sandbox ledger reset|copy <stack>`: a new ledger, started on purpose (asks on a terminal unless --yes), or a move. */
export async function runLedgerCommand(
  sub: string | undefined,
  rest: readonly string[],
  c: {
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
  },
): Promise<number> {
  if (sub === "copy") return ledgerCopyVerb(rest, c);
  if (sub === "local") return ledgerLocalVerb(rest, c);
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

/** `sandbox ledger copy <stack> [--to <url>] [--from <file>]`. */
async function ledgerCopyVerb(
  rest: readonly string[],
  c: Parameters<typeof runLedgerCommand>[2],
): Promise<number> {
  const rep = new Reporter(c.io, c.json, false);
  const args = [...rest];
  const stack = args[0] !== undefined && !args[0].startsWith("-") ? args.shift() : undefined;
  const fail = (message: string, exitCode = 2, kind = "bad-input") =>
    rep.failure({ verb: "ledger", stack: stack ?? "", ok: false, exitCode, error: { kind, message } });
  const options: { to?: string; from?: string } = {};
  while (args.length > 0) {
    const a = args.shift() ?? "";
    const eq = a.indexOf("=");
    const [name, inline] = a.startsWith("--") && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    if (name !== "--to" && name !== "--from")
      return fail(
        `ledger copy: unexpected argument ${JSON.stringify(a)} (allowed: <stack>, --to <url>, --from <file>)`,
      );
    const value = inline ?? args.shift();
    if (value === undefined || value === "") return fail(`ledger copy: ${name} needs a value`);
    options[name === "--to" ? "to" : "from"] = value;
  }
  if (stack === undefined) return fail("usage: sandbox ledger copy <stack> [--to <url>] [--from <file>]");
  let project: ResolvedProject;
  try {
    project = c.load(stack);
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    return fail(e.message);
  }
  const configured = c.file(stack, project);
  const to = options.to ?? (isLedgerUrl(configured) ? configured : undefined);
  if (to === undefined)
    return fail(
      "ledger copy: --to <url> names the shared ledger (postgresql://user@host/db; its password in PGPASSWORD or ~/.pgpass), or set sandbox:ledger: { url } in the stack's config",
    );
  const problem = isLedgerUrl(to) ? ledgerUrlProblem(to) : "must be a PostgreSQL URL (postgresql://…)";
  if (problem !== undefined) return fail(`ledger copy: --to: ${problem}`);
  const from = options.from ?? c.localFile(stack, project);
  if (!isAbsolute(from) || isLedgerUrl(from))
    return fail(`ledger copy: --from ${JSON.stringify(from)}: must be the absolute path of a ledger file`);
  try {
    const { text, count } = await copyProjectLedger(from, to, project);
    return rep.result(
      {
        verb: "ledger",
        stack,
        ok: true,
        exitCode: 0,
        project: project.spec.name,
        from,
        ledger: to,
        copied: count,
      },
      text,
    );
  } catch (e) {
    if (e instanceof CopyRefused) return fail(e.message, 1, "ledger");
    if (e instanceof LedgerGone || isLedgerProblem(e)) return fail(e.message, 1, "ledger");
    throw e;
  }
}

/** The folder of the checkout's local PostgreSQL server (`sandbox ledger local`). */
export function localLedgerServerDir(root: string): string {
  return join(root, ".sandbox", "postgres");
}

/** The database of the local server that holds the shared ledger. */
const LOCAL_DATABASE = "ledger";

/**
 * `sandbox ledger local <stack> [--stop]`: starts (or finds running) the checkout's local PostgreSQL server for a
 * shared ledger (Debian's package; its data in `.sandbox/postgres`, a unix socket there, no TCP port) and says its URL
 * and how the project moves there; `--stop` stops it (the off switch does too, when the project's ledger is there).
 */
async function ledgerLocalVerb(
  rest: readonly string[],
  c: Parameters<typeof runLedgerCommand>[2],
): Promise<number> {
  const rep = new Reporter(c.io, c.json, false);
  const [stack, ...flags] = rest;
  const fail = (message: string, exitCode = 2, kind = "bad-input") =>
    rep.failure({ verb: "ledger", stack: stack ?? "", ok: false, exitCode, error: { kind, message } });
  const stop = flags.includes("--stop");
  const unknown = flags.filter((f) => f !== "--stop");
  if (stack === undefined || stack.startsWith("-") || unknown.length > 0)
    return fail(
      `usage: sandbox ledger local <stack> [--stop]${unknown.length > 0 ? ` (unexpected ${JSON.stringify(unknown[0])})` : ""}`,
    );
  let project: ResolvedProject;
  try {
    project = c.load(stack);
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    return fail(e.message);
  }
  const dir = localLedgerServerDir(c.root);
  const local = await import("../runtime/ledger/local-postgres.js");
  const url = local.localPostgresUrl(dir, LOCAL_DATABASE);
  try {
    if (stop) {
      const stopped = local.stopLocalPostgres(dir);
      return rep.result(
        {
          verb: "ledger",
          stack,
          ok: true,
          exitCode: 0,
          project: project.spec.name,
          ledger: url,
          running: false,
        },
        stopped
          ? `the local PostgreSQL in ${dir} is stopped (its data is kept; \`sandbox ledger local ${stack}\` starts it again)\n`
          : `no local PostgreSQL runs in ${dir}\n`,
      );
    }
    const server = await local.startLocalPostgres(dir);
    await local.ensureDatabase(server.url, LOCAL_DATABASE);
    const configured = c.file(stack, project);
    const next =
      configured === url
        ? `project ${project.spec.name} is metered there (sandbox:ledger.url).`
        : `To meter project ${project.spec.name} there: \`sandbox ledger copy ${stack} --to '${url}'\` (moves its history), then set sandbox:ledger: { url: '${url}' } in the stack's config.`;
    return rep.result(
      {
        verb: "ledger",
        stack,
        ok: true,
        exitCode: 0,
        project: project.spec.name,
        ledger: url,
        running: true,
      },
      `the local PostgreSQL runs in ${dir} (a unix socket there, no TCP port; \`sandbox ledger local ${stack} --stop\` or the off switch stops it): ${url}\n${next}\n`,
    );
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e), 1, "ledger");
  }
}

/**
 * After the off switch: the checkout's local PostgreSQL stops when the project's ledger is kept there (nothing of
 * the project runs, so nothing meters). Returns what to print, or undefined when there was nothing to stop.
 */
export async function stopLocalLedgerServer(root: string, ledgerAt: string): Promise<string | undefined> {
  const dir = localLedgerServerDir(root);
  if (!isLedgerUrl(ledgerAt)) return undefined;
  const local = await import("../runtime/ledger/local-postgres.js");
  if (local.localPostgresDirOf(ledgerAt) !== dir || !local.stopLocalPostgres(dir)) return undefined;
  return `the local PostgreSQL that keeps the project's ledger (${dir}) is stopped; \`sandbox ledger local <stack>\` starts it again\n`;
}
