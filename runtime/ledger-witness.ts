/**
 * The ledger's witness: a small record, kept outside the ledger's file (in the project's job root on this machine),
 * of which ledger meters the project. Deleting, emptying or replacing the ledger's file would otherwise start the
 * month's spend, audit and alerts over from zero without a word, and with them the hard stop; a second ledger for
 * the same project (another checkout) would keep books of its own. With a witness, both are refused until a person
 * starts a new ledger on purpose ({@link resetWitness}).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What the witness holds. */
export interface Witness {
  readonly project: string;
  readonly ledgerId: string;
  readonly file: string;
  readonly since: string;
}

/** A ledger that is not the one the project was metered with: the launch, `up` or the report is refused. */
export class LedgerGone extends Error {}

/** Where the witness of a project's ledger is kept. */
export function witnessPath(jobRoot: string): string {
  return join(jobRoot, ".sandbox-ledger.json");
}

function readWitness(jobRoot: string): Witness | undefined {
  try {
    const w = JSON.parse(readFileSync(witnessPath(jobRoot), "utf8")) as Partial<Witness>;
    return typeof w.ledgerId === "string" && typeof w.file === "string"
      ? { project: String(w.project), ledgerId: w.ledgerId, file: w.file, since: String(w.since) }
      : undefined;
  } catch {
    return undefined;
  }
}

function gone(w: Witness, what: string, reset: string): LedgerGone {
  return new LedgerGone(
    `the ledger of project ${w.project} (${w.file}, in use since ${w.since}) ${what}: metering from here would start the month's spend, audit and alerts over from zero. Put that file back, or start a new ledger on purpose with \`${reset}\``,
  );
}

/**
 * Before the ledger `file` is opened (opening creates it): refused when the project's witness names a ledger and
 * the file is missing or empty.
 */
export function checkBeforeOpen(jobRoot: string, file: string, reset: string): void {
  const w = readWitness(jobRoot);
  if (w === undefined) return;
  if (!existsSync(file))
    throw w.file === file
      ? gone(w, `is gone: ${file} does not exist`, reset)
      : gone(
          w,
          `is kept there, and ${file} does not exist (a second ledger would keep books of its own)`,
          reset,
        );
  if (statSync(file).size === 0) throw gone(w, `was emptied: ${file} holds nothing`, reset);
}

/**
 * After the ledger is opened: refused when the witness names another ledger (a ledger moved with its checkout is
 * the same ledger: the witness follows it); the first ledger a project meets becomes its witnessed one (written
 * where the job root can be written; a reader who cannot write checks only).
 */
export function checkAfterOpen(
  jobRoot: string,
  project: string,
  file: string,
  id: string,
  reset: string,
): void {
  const w = readWitness(jobRoot);
  if (w !== undefined && w.ledgerId !== id)
    throw gone(
      w,
      `is not the one at ${file} (that is another ledger, made ${w.file === file ? "anew" : "elsewhere"})`,
      reset,
    );
  if (w === undefined)
    writeWitness(jobRoot, { project, ledgerId: id, file, since: new Date().toISOString() });
  else if (w.file !== file) writeWitness(jobRoot, { ...w, file });
}

function writeWitness(jobRoot: string, w: Witness): void {
  try {
    mkdirSync(jobRoot, { recursive: true, mode: 0o755 });
    const tmp = `${witnessPath(jobRoot)}.${process.pid}`;
    writeFileSync(tmp, `${JSON.stringify(w)}\n`, { mode: 0o644 });
    renameSync(tmp, witnessPath(jobRoot));
  } catch {
    // A job root this user cannot write: nothing is witnessed here, and the launcher (which writes there) will.
  }
}

/** Makes the ledger `id` at `file` the project's witnessed one: a new ledger started on purpose. */
export function resetWitness(
  jobRoot: string,
  project: string,
  file: string,
  id: string,
): Witness | undefined {
  const before = readWitness(jobRoot);
  writeWitness(jobRoot, { project, ledgerId: id, file, since: new Date().toISOString() });
  return before;
}
