import { join } from "node:path";

/** The verbs that read the ledger; they need the stack's config but no engine. */
export const LEDGER_VERBS = ["spend", "audit", "alerts"] as const;
export type LedgerVerb = (typeof LEDGER_VERBS)[number];

/** The ledger file of a project: `<root>/.sandbox/ledger/<project>.sqlite`, beside the stacks' state. */
export function ledgerFile(root: string, project: string): string {
  return join(root, ".sandbox", "ledger", `${project}.sqlite`);
}
