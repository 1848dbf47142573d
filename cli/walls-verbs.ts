/**
 * The `probe` and `escape` verbs' loops, the same on every backend: each template in turn, its report or its four
 * escape attempts, a walls table or one line an attempt on stdout (one JSON document with --json), progress on
 * stderr. Exit 0 when every wall held and every escape was blocked with nothing left, else 1.
 */
import type { ProbeReport } from "../components/model";
import { ESCAPE_CHECKS, type EscapeCheck, type EscapeResult } from "../runtime/walls";
import { escapeControls, type Io } from "./output";
import { wallsTable } from "./walls-table";

/** Probes each template with `probe` (undefined: not a template of the project, skipped). */
export async function probeVerb(
  templates: readonly string[],
  probe: (template: string) => Promise<ProbeReport | undefined>,
  io: Io,
  json: boolean,
): Promise<number> {
  let ok = true;
  const reports: Record<string, unknown> = {};
  for (const template of templates) {
    io.err(`probing template ${template}...\n`);
    const report = await probe(template);
    if (report === undefined) continue;
    reports[template] = report;
    ok &&= report.passed;
    // The same table `up` prints from the stack's probe outputs.
    if (!json) io.out(wallsTable(template, report));
  }
  if (json) io.out(`${JSON.stringify({ verb: "probe", ok, exitCode: ok ? 0 : 1, templates: reports })}\n`);
  return ok ? 0 : 1;
}

/** Tries the four escapes from each template with `attempt`; `seen` hears of each result (the ledger's alert). */
export async function escapeVerb(
  templates: readonly string[],
  attempt: (template: string, check: EscapeCheck) => Promise<EscapeResult>,
  io: Io,
  json: boolean,
  seen: (template: string, result: EscapeResult) => Promise<void> | undefined = () => undefined,
): Promise<number> {
  let ok = true;
  const results: Record<string, EscapeResult[]> = {};
  for (const template of templates) {
    const mine: EscapeResult[] = [];
    results[template] = mine;
    for (const check of ESCAPE_CHECKS) {
      io.err(`escape ${check} from template ${template}...\n`);
      const r = await attempt(template, check);
      mine.push(r);
      await seen(template, r);
      ok &&= r.blocked && r.leftovers.length === 0;
      if (!json) {
        io.out(
          `${r.blocked ? "blocked" : "ESCAPED"} ${check} (${template}): by ${r.blockedBy}; ${escapeControls(r.evidence)}; left running: ${r.leftovers.length}\n`,
        );
      }
    }
  }
  if (json) io.out(`${JSON.stringify({ verb: "escape", ok, exitCode: ok ? 0 : 1, templates: results })}\n`);
  return ok ? 0 : 1;
}
