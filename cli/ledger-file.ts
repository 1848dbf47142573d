import { isAbsolute } from "node:path";
import { defaultLedgerFile } from "../runtime/ledger/open";

/** The verbs that read the ledger; they need the stack's config but no engine. */
export const LEDGER_VERBS = ["spend", "audit", "alerts"] as const;
export type LedgerVerb = (typeof LEDGER_VERBS)[number];

/** The environment variable that moves a project's ledger (an absolute file path); it overrides the config. */
export const LEDGER_ENV = "SANDBOX_LEDGER";

/**
 * The ledger file of a project on this machine: `SANDBOX_LEDGER` when set, else `sandbox:ledger.file`, else beside
 * the project's job root (`<jobRoot>.ledger.sqlite`). One place per project per machine, whichever checkout or
 * launcher meters it; the job root's witness notices a second ledger all the same (runtime/ledger/witness.ts).
 */
export function ledgerFile(
  place: { readonly jobRoot: string; readonly file?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const moved = env[LEDGER_ENV];
  if (moved !== undefined && moved !== "" && ledgerEnvProblem(env) === undefined) return moved;
  return place.file ?? defaultLedgerFile(place.jobRoot);
}

/** What is wrong with `SANDBOX_LEDGER` (the front refuses to start with it), or undefined when it is usable or unset. */
export function ledgerEnvProblem(env: NodeJS.ProcessEnv): string | undefined {
  const moved = env[LEDGER_ENV];
  if (moved === undefined || moved === "") return undefined;
  if (isAbsolute(moved) && !moved.endsWith("/") && !moved.split("/").includes("..") && !moved.includes("\0"))
    return undefined;
  return `${LEDGER_ENV}=${JSON.stringify(moved)}: must be the absolute path of the ledger's file (no .. segments, not a folder)`;
}
