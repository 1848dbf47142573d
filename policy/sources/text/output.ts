/** What the formats' readers write for one file: its resources, what was skipped, and what could not be read. */

import type { InputFormat, Location } from "../../report/model";
import { noTaint, type TaintCheck } from "../lenient";
import type { Parsed, StackInfo } from "./items";

/** A JSON object (not null, not a list). */
export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A non-empty string, or undefined. */
export function text(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** A resource a format's reader found, before it becomes a scan item. */
export interface FoundResource {
  readonly format: InputFormat;
  /** The type token the adapters read it by. */
  readonly type: string;
  readonly props: unknown;
  /** The kind and name reports show, and the id exemptions match. */
  readonly kind: string;
  readonly name: string;
  readonly id: string;
  /** Where a finding at a resource path points; called with undefined for the resource itself. */
  readonly locate: (path: string | undefined) => Location;
  readonly taint?: TaintCheck;
  readonly stack?: StackInfo;
  readonly assumptions?: readonly string[];
  /** The object as the API server returned it (ScanItem.live). */
  readonly live?: boolean;
  /** Job roots the input declares for its own job folders (the toolkit's launch spec: `jobFolder.hostRoot`). */
  readonly jobRoots?: readonly string[];
}

/** One file's `Parsed`, written by the readers of its documents. */
export class FileOutput {
  constructor(
    /** The name the file is reported by. */
    readonly file: string,
    private readonly out: Parsed,
    /** Running counts per kind over the whole file (shared by the readers of its JSON stream's values). */
    private readonly counts: Map<string, number> = new Map(),
  ) {}

  /** The same output, reported under another file's name (a Compose project read from one of its files). */
  as(file: string): FileOutput {
    return file === this.file ? this : new FileOutput(file, this.out);
  }

  /** The counts, for a reader of another part of the same file. */
  get ordinals(): Map<string, number> {
    return this.counts;
  }

  /** The 1-based position of the next resource of `kind` in the file, in reading order. */
  next(kind: string): number {
    const n = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, n);
    return n;
  }

  /** A location in this file, at `line` when it is known. */
  loc(line: number | undefined): Location {
    return line === undefined ? { file: this.file } : { file: this.file, line };
  }

  add(r: FoundResource): void {
    const { format, type, props, kind, name, id, locate } = r;
    this.out.items.push({
      type,
      props,
      name,
      resource: { id, kind, name, type, format, location: locate(undefined) },
      taint: r.taint ?? noTaint,
      locate,
      ...(r.stack === undefined ? {} : { stack: r.stack }),
      ...(r.assumptions === undefined ? {} : { assumptions: r.assumptions }),
      ...(r.live === true ? { live: true } : {}),
      ...(r.jobRoots === undefined ? {} : { jobRoots: r.jobRoots }),
    });
  }

  /** Adds what a reading of a part of the file found (a value of a JSON stream). */
  addAll(part: Parsed): void {
    this.out.items.push(...part.items);
    this.out.skipped.push(...part.skipped);
    this.out.errors.push(...part.errors);
  }

  skip(line: number | undefined, kind: string, reason: string, name?: string): void {
    this.out.skipped.push({
      location: this.loc(line),
      kind,
      ...(name === undefined ? {} : { name }),
      reason,
    });
  }

  error(line: number | undefined, message: string): void {
    this.out.errors.push({ location: this.loc(line), message });
  }
}
