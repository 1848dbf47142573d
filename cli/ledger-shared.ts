/**
 * The shared ledger's verbs: `sandbox ledger copy` (a project's SQLite history into a ledger on PostgreSQL) and
 * `sandbox ledger local` (this checkout's own PostgreSQL server), and the off switch's stop of that server.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { type ResolvedProject, SpecError, usdFine } from "../components/model";
import { isLedgerProblem, isLedgerUrl, Ledger, meterOf } from "../runtime/ledger";
import { type CopyCount, CopyRefused, copyLedger } from "../runtime/ledger/copy";
import { LedgerGone, resetWitness } from "../runtime/ledger/witness";
import { ledgerUrlProblem } from "../stacks/config";
import type { LedgerCommandContext } from "./ledger";
import { Reporter } from "./output";

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

/** `sandbox ledger copy <stack> [--to <url>] [--from <file>]`. */
export async function ledgerCopyVerb(rest: readonly string[], c: LedgerCommandContext): Promise<number> {
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
export async function ledgerLocalVerb(rest: readonly string[], c: LedgerCommandContext): Promise<number> {
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
  const head = { verb: "ledger", stack, ok: true, exitCode: 0, project: project.spec.name, ledger: url };
  try {
    if (stop) {
      const stopped = local.stopLocalPostgres(dir);
      return rep.result(
        { ...head, running: false },
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
      { ...head, running: true },
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
