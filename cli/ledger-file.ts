import { isAbsolute } from "node:path";
import { defaultLedgerFile } from "../runtime/ledger/open";
import { ledgerUrlProblem } from "../stacks/config";

/** The verbs that read the ledger; they need the stack's config but no engine. */
export const LEDGER_VERBS = ["spend", "audit", "alerts"] as const;
export type LedgerVerb = (typeof LEDGER_VERBS)[number];

/** The environment variable that moves a project's ledger (an absolute file path); it overrides the config. */
export const LEDGER_ENV = "SANDBOX_LEDGER";

/**
 * The place of a project's ledger: `SANDBOX_LEDGER` when set, else `sandbox:ledger.url` (a shared ledger on
 * PostgreSQL) or `sandbox:ledger.file`, else beside the project's job root (`<jobRoot>.ledger.sqlite`). One place per
 * project per machine, whichever checkout or launcher meters it; the job root's witness notices a second ledger all
 * the same (runtime/ledger/witness.ts).
 */
export function ledgerFile(
  place: { readonly jobRoot: string; readonly file?: string | undefined; readonly url?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const moved = env[LEDGER_ENV];
  if (moved !== undefined && moved !== "" && ledgerEnvProblem(env) === undefined) return moved;
  return place.url ?? place.file ?? defaultLedgerFile(place.jobRoot);
}

/**
 * The project's SQLite ledger on this machine whatever shared ledger is configured: `SANDBOX_LEDGER` when it names a
 * file, else `sandbox:ledger.file`, else beside the job root (what `sandbox ledger copy` copies from).
 */
export function localLedgerFile(
  place: { readonly jobRoot: string; readonly file?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const moved = env[LEDGER_ENV];
  if (moved !== undefined && moved !== "" && isAbsolute(moved) && ledgerEnvProblem(env) === undefined)
    return moved;
  return place.file ?? defaultLedgerFile(place.jobRoot);
}

/** What is wrong with `SANDBOX_LEDGER` (the front refuses to start with it), or undefined when it is usable or unset. */
export function ledgerEnvProblem(env: NodeJS.ProcessEnv): string | undefined {
  const moved = env[LEDGER_ENV];
  if (moved === undefined || moved === "") return undefined;
  if (isAbsolute(moved) && !moved.endsWith("/") && !moved.split("/").includes("..") && !moved.includes("\0"))
    return undefined;
  if (/^postgres(ql)?:\/\//.test(moved)) {
    const problem = ledgerUrlProblem(moved);
    return problem === undefined ? undefined : `${LEDGER_ENV}: ${problem}`;
  }
  return `${LEDGER_ENV}=${JSON.stringify(moved)}: must be the absolute path of the ledger's file (no .. segments, not a folder), or a PostgreSQL URL`;
}
