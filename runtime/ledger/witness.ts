/**
 * The ledger's witness: a small record, kept outside the ledger's file (in the project's job root on this machine),
 * of which ledger meters the project. Deleting, emptying or replacing the ledger's file would otherwise start the
 * month's spend, audit and alerts over from zero without a word, and with them the hard stop; a second ledger for
 * the same project (another checkout) would keep books of its own. With a witness, a ledger gone or replaced is
 * refused until a person starts a new one on purpose ({@link resetWitness}), and a second ledger is noticed.
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
 * Before the ledger `file` is opened (opening creates it): refused when the project's witness names this file and
 * it is missing or empty.
 */
export function checkBeforeOpen(jobRoot: string, file: string, reset: string): void {
  const w = readWitness(jobRoot);
  if (w === undefined || w.file !== file) return;
  if (!existsSync(file)) throw gone(w, `is gone: ${file} does not exist`, reset);
  if (statSync(file).size === 0) throw gone(w, `was emptied: ${file} holds nothing`, reset);
}

/**
 * After the ledger is opened: refused when the witness names this file and it holds another ledger (replaced); a
 * ledger moved with its checkout is the same ledger, and the witness follows it; a second ledger elsewhere (another
 * checkout) is noticed: the returned warning says so, and the witness keeps naming the first. The first ledger a
 * project meets becomes its witnessed one (written where the job root can be written; a reader who cannot write
 * checks only).
 */
export function checkAfterOpen(
  jobRoot: string,
  project: string,
  file: string,
  id: string,
  reset: string,
): string | undefined {
  const w = readWitness(jobRoot);
  if (w === undefined) {
    writeWitness(jobRoot, { project, ledgerId: id, file, since: new Date().toISOString() });
    return undefined;
  }
  if (w.ledgerId === id) {
    if (w.file !== file) writeWitness(jobRoot, { ...w, file });
    return undefined;
  }
  if (w.file === file) throw gone(w, `was replaced: ${file} holds another ledger, made anew`, reset);
  return `project ${w.project} is also metered by the ledger at ${w.file} (since ${w.since}); this one, ${file}, keeps books of its own, so each holds the cap for its own runs only (\`${reset}\` makes this one the project's)`;
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
