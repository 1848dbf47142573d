/**
 * Opening a project's ledger as every launcher must: in its place on this machine (beside the job root unless moved),
 * checked against the job root's witness (a ledger gone or replaced is refused; a second one is noticed).
 */
import type { Meter } from "../../components/model/metering";
import { isLedgerUrl, Ledger, type LedgerOptions } from "./index";
import { checkAfterOpen, checkBeforeOpen } from "./witness";

/** The default place of a project's ledger: beside its job root, one file per project per machine. */
export function defaultLedgerFile(jobRoot: string): string {
  return `${jobRoot.replace(/\/+$/, "")}.ledger.sqlite`;
}

export interface OpenLedgerOptions extends LedgerOptions {
  /** The project's job root on this machine (the launch spec's `jobFolder.hostRoot`): its witness is kept there. */
  readonly jobRoot: string;
  /** The ledger's file, or a PostgreSQL URL; defaults to {@link defaultLedgerFile} (where the front keeps it too). */
  readonly file?: string;
  /** How to start a new ledger on purpose, named in a refusal. Defaults to the front's verb. */
  readonly reset?: string;
  /** Where a warning goes (a second ledger metering the project). Defaults to stderr. */
  readonly warn?: (text: string) => void;
}

/**
 * Opens (creating and migrating when needed) the ledger of `meter.project`: a ledger gone, emptied or replaced
 * behind the project's back is refused (LedgerGone) rather than started over from zero.
 */
export async function openLedger(meter: Meter, options: OpenLedgerOptions): Promise<Ledger> {
  const file = options.file ?? defaultLedgerFile(options.jobRoot);
  const reset = options.reset ?? "sandbox ledger reset <stack>";
  const warn = options.warn ?? ((t: string) => process.stderr.write(t));
  // A file gone or emptied is seen before opening it would make it anew; a server's database replaced, after.
  if (!isLedgerUrl(file)) checkBeforeOpen(options.jobRoot, file, reset);
  const ledger = await Ledger.at(file, meter, options);
  try {
    const second = checkAfterOpen(options.jobRoot, meter.project, file, await ledger.id(), reset);
    if (second !== undefined) warn(`warning: ${second}\n`);
  } catch (e) {
    await ledger.close();
    throw e;
  }
  return ledger;
}
