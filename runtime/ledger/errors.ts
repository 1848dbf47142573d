/**
 * What a ledger's store throws besides its rules' refusals: a store that does not answer, a statement the server
 * refused, a ledger a newer toolkit wrote. The front reports each as the ledger's problem (exit 1), never a crash.
 */
/** A ledger's store that does not answer (a server down, a connection lost): launches are refused until it does. */
export class LedgerUnavailable extends Error {
  constructor(
    readonly place: string,
    cause: unknown,
  ) {
    super(
      `the ledger at ${place} did not answer (${cause instanceof Error ? cause.message : String(cause)}); nothing is launched or recorded until it does`,
      { cause },
    );
    this.name = "LedgerUnavailable";
  }
}

/** A statement the server answered with an error (the ledger is there; this write was refused and rolled back). */
export class LedgerStatementFailed extends Error {
  constructor(place: string, cause: unknown) {
    super(
      `the ledger at ${place} refused a statement: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = "LedgerStatementFailed";
  }
}

/** A ledger whose schema a newer toolkit wrote: refused by name, never written to. */
export class LedgerTooNew extends Error {}

/** Whether `e` is one of the ledger's own problems (above), which the front reports by message. */
export function isLedgerProblem(e: unknown): e is Error {
  return e instanceof LedgerUnavailable || e instanceof LedgerStatementFailed || e instanceof LedgerTooNew;
}
