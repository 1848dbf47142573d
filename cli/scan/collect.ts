/**
 * Reading `scan`'s inputs into resources under the caps (cli/scan/files.ts, policy/sources/text/limits.ts), and judging them so
 * that a crash on one resource is reported on its file while the rest are still judged.
 */
import { lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { basename, dirname, relative, resolve } from "node:path";
import type { InputError, Skipped } from "../../policy/report/model";
import { discoverProject } from "../../policy/sources/compose/discover";
import { type InputHost, parseInput, type ScanItem } from "../../policy/sources/text/documents";
import type { ComposeRegistry } from "../../policy/sources/text/items";
import {
  DEFAULT_MAX_ALIAS_NODES,
  DEFAULT_MAX_DEPTH,
  structureProblem,
} from "../../policy/sources/text/limits";
import { Budget, InputRefused, MIB, SKIPPED_FOLDERS, skippedFolderNote, walkFolder } from "./files";
import type { scanItems as scanAll } from "./run";
import { readStandardInput } from "./stdin";

/** What `collect` needs of the command's environment (cli/scan.ts `ScanEnv`). */
export interface CollectEnv {
  readonly cwd?: string;
  readonly readStdin?: () => string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A size in bytes: a whole number, optionally with K, M or G (1024-based; `KiB`, `MB` and the like read alike). */
export function parseSize(v: string | undefined): number | undefined {
  const m = v === undefined ? null : /^(\d+)\s*(?:([kmg])(?:i?b)?|b)?$/i.exec(v.trim());
  if (m === null) return undefined;
  const unit = (m[2] ?? "").toLowerCase();
  const n = Number(m[1]) * (unit === "k" ? 1024 : unit === "m" ? MIB : unit === "g" ? 1024 * MIB : 1);
  return n >= 1 && Number.isSafeInteger(n) ? n : undefined;
}

/** The caps `collect` reads under. */
export interface CollectLimits {
  readonly maxFileBytes: number;
  readonly maxTotalBytes: number;
  readonly maxDepth: number;
  readonly verbose?: boolean;
  /** A skipped folder holding files kubectl would apply is an error, not a listing (`--fail-on-unjudged`). */
  readonly failOnUnjudged?: boolean;
}

const DEFAULT_COLLECT_LIMITS: CollectLimits = {
  maxFileBytes: 32 * MIB,
  maxTotalBytes: 256 * MIB,
  maxDepth: DEFAULT_MAX_DEPTH,
};

/** What went wrong inside the scanner (never the input's fault), as one short line. */
export function internalError(what: string, e: unknown, verbose: boolean | undefined): string {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const detail = verbose === true && e instanceof Error && e.stack !== undefined ? `\n${e.stack}` : "";
  return `internal error while ${what}: ${message.split("\n")[0]}; please report this${verbose === true ? "" : " (run with --verbose for details)"}${detail}`;
}

/**
 * Reads every input into resources; missing paths, refused files (not regular, too large, binary, too deeply nested)
 * and a reader's crash are errors on that file, never a crash or a hang: the other files are still read.
 */
export function collect(
  paths: readonly string[],
  env: CollectEnv,
  stdinName = "<stdin>",
  limits: CollectLimits = DEFAULT_COLLECT_LIMITS,
): { inputs: string[]; items: ScanItem[]; skipped: Skipped[]; errors: InputError[] } {
  const cwd = env.cwd ?? process.cwd();
  const inputs: string[] = [];
  const items: ScanItem[] = [];
  const skipped: Skipped[] = [];
  const errors: InputError[] = [];
  const budget = new Budget(limits);
  const structure = { maxDepth: limits.maxDepth, maxAliasNodes: DEFAULT_MAX_ALIAS_NODES };
  const show = (abs: string) => {
    const r = relative(cwd, abs);
    return r === "" ? "." : r.split("\\").join("/");
  };
  const compose: ComposeRegistry = { folders: new Map(), reported: new Set() };
  // One plain copy of the environment for the whole scan: every folder's Compose discovery reads all of it, and
  // process.env is slow to read.
  const environment: NodeJS.ProcessEnv = { ...(env.env ?? process.env) };
  // Each folder's names, listed once: a Compose project is looked for in every folder by a handful of names.
  const listings = new Map<string, ReadonlySet<string> | undefined>();
  const listed = (folder: string): ReadonlySet<string> | undefined => {
    if (!listings.has(folder)) {
      let names: ReadonlySet<string> | undefined;
      try {
        names = new Set(readdirSync(folder).map((n) => n.toLowerCase()));
      } catch {
        names = undefined; // not listable: every name is looked at itself
      }
      listings.set(folder, names);
    }
    return listings.get(folder);
  };
  const exists = (p: string): boolean => {
    // An ASCII name the folder does not list, in any case (a case-insensitive file system finds `Compose.yaml`), is
    // not there; other names are looked at themselves (a file system may normalise them).
    const name = basename(p);
    if (/^[\x20-\x7e]+$/.test(name) && listed(dirname(p))?.has(name.toLowerCase()) === false) return false;
    try {
      statSync(p);
      return true;
    } catch {
      return false;
    }
  };
  const host = (path: string | undefined): InputHost => ({
    ...(path === undefined ? {} : { path }),
    exists,
    display: show,
    compose,
    // Files a Compose file pulls in (include, extends, env_file) are read under the same caps.
    readFile: (p) => {
      try {
        const text = budget.readFile(p);
        const problem = structureProblem(text, structure);
        if (problem !== undefined) throw new InputRefused(problem.message);
        return text.startsWith("\ufeff") ? text.slice(1) : text;
      } catch (e) {
        if (e instanceof InputRefused) throw new Error(`${show(p)} ${e.message}`);
        throw e;
      }
    },
    env: environment,
  });
  /** Reads one input; false when it held nothing at all (no object, nothing skipped, no error). */
  const read = (name: string, text: string, path?: string): boolean => {
    inputs.push(name);
    const problem = structureProblem(text, structure);
    if (problem !== undefined) {
      errors.push({
        location: problem.line === undefined ? { file: name } : { file: name, line: problem.line },
        message: problem.message,
      });
      return true;
    }
    let parsed: ReturnType<typeof parseInput>;
    try {
      parsed = parseInput(name, text, host(path));
    } catch (e) {
      errors.push({ location: { file: name }, message: internalError(`reading ${name}`, e, limits.verbose) });
      return true;
    }
    items.push(...parsed.items);
    skipped.push(...parsed.skipped);
    errors.push(...parsed.errors);
    return parsed.items.length + parsed.skipped.length + parsed.errors.length > 0;
  };
  const refused = (file: string, e: unknown) => {
    const message =
      e instanceof InputRefused ? e.message : `cannot be read: ${e instanceof Error ? e.message : String(e)}`;
    errors.push({ location: { file }, message });
  };
  for (const p of paths) {
    if (p === "-") {
      let text: string;
      try {
        text = budget.readStdin(env.readStdin ?? (() => readStandardInput(limits.maxTotalBytes)));
      } catch (e) {
        refused(stdinName, e);
        continue;
      }
      // `helm template ... | scan -` where the command printed nothing must not pass: kubectl apply refuses it too
      // ("no objects passed to apply").
      if (text.trim() === "")
        errors.push({
          location: { file: stdinName },
          message:
            "is empty: nothing was scanned (did the command writing to the pipe print nothing?); kubectl apply refuses it too (no objects passed to apply)",
        });
      else if (!read(stdinName, text))
        errors.push({
          location: { file: stdinName },
          message:
            "holds no object (only comments, --- or null): nothing was scanned; kubectl apply refuses it too (no objects passed to apply)",
        });
      continue;
    }
    const abs = resolve(cwd, p);
    let files: string[];
    try {
      if (statSync(abs).isDirectory()) {
        const walked = walkFolder(abs, show);
        // A folder's Compose project is judged even when no file of it has a scanned extension (COMPOSE_FILE in
        // `.env` may name any file): its first file is read, and the others with it.
        const { extra, members } = composeFilesToRead(walked, host(undefined));
        files = [...walked.files, ...extra];
        for (const s of walked.skipped) {
          const main = members.get(s.path);
          if (extra.includes(s.path)) continue;
          if (main !== undefined)
            skipped.push({
              location: { file: show(s.path) },
              kind: "compose file",
              reason: `merged into the Compose project of ${show(main)}, judged there`,
            });
          // What the scan cannot judge counts with --fail-on-unjudged (on with --ci): a skipped folder that
          // kubectl would apply files from is then an error, not a listing.
          else if (s.holds !== undefined && limits.failOnUnjudged === true)
            errors.push({
              location: { file: show(s.path) },
              message: `is not scanned (${SKIPPED_FOLDERS[basename(s.path)] ?? "skipped"})${skippedFolderNote(s.holds, show)}, remove those files, or pass --no-fail-on-unjudged: with --fail-on-unjudged (on with --ci) what the scan cannot judge fails it`,
            });
          else skipped.push({ location: { file: show(s.path) }, kind: s.kind, reason: s.reason });
        }
        for (const w of walked.errors) errors.push({ location: { file: show(w.path) }, message: w.message });
      } else files = [abs];
    } catch (e) {
      errors.push({ location: { file: p }, message: missing(abs, e) });
      continue;
    }
    for (const f of files) {
      let text: string;
      try {
        text = budget.readFile(f);
      } catch (e) {
        refused(show(f), e);
        continue;
      }
      read(show(f), text, f);
    }
  }
  return { inputs, items, skipped, errors };
}

/**
 * The first file of each folder's Compose project whose files the walk does not read (compose/discover.ts), and
 * every project file with the project's first file.
 */
function composeFilesToRead(
  walked: ReturnType<typeof walkFolder>,
  host: InputHost,
): { extra: string[]; members: Map<string, string> } {
  const folders = new Set(
    [...walked.files, ...walked.skipped.filter((s) => s.kind === "file").map((s) => s.path)].map((f) =>
      dirname(f),
    ),
  );
  const out: string[] = [];
  const members = new Map<string, string>();
  for (const folder of folders) {
    let found = host.compose?.folders.get(folder);
    if (host.compose?.folders.has(folder) !== true) {
      found = discoverProject(folder, host, host.display);
      host.compose?.folders.set(folder, found);
    }
    const first = found?.files[0];
    if (first === undefined) continue;
    for (const f of found?.files ?? []) members.set(f, first);
    if (!found?.files.some((f) => walked.files.includes(f))) out.push(first);
  }
  return { extra: out, members };
}

/** Why a named path cannot be looked at, by the error `stat` gave (it follows symbolic links). */
function missing(abs: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ELOOP") return "is a symbolic link loop (ELOOP: too many levels of symbolic links); not read";
  if (code === "EACCES") return "cannot be looked at: permission denied (EACCES)";
  if (code === "ENOTDIR") return "no such file or folder (a part of the path is not a folder)";
  if (code !== "ENOENT") return `cannot be looked at: ${e instanceof Error ? e.message : String(e)}`;
  try {
    if (lstatSync(abs).isSymbolicLink())
      return `is a symbolic link to nothing (it points to ${JSON.stringify(readlinkSync(abs))}); not read`;
  } catch {
    // not there at all
  }
  return "no such file or folder";
}

type ScanArgs = Parameters<typeof scanAll>;

/**
 * Judges the inputs with `scanAll`; if the rules crash, judges each resource alone to find the ones that do, reports
 * those as internal errors on their files, and judges the rest, so one bad resource never hides the others' verdicts.
 */
export function judgeIsolating(
  scan: typeof scanAll,
  verbose: boolean | undefined,
  input: ScanArgs[0],
  ...rest: ScanArgs extends [unknown, ...infer R] ? R : never
): ReturnType<typeof scanAll> {
  const scanAllOf = scan;
  try {
    return scanAllOf(input, ...rest);
  } catch (first) {
    const crashes = new Map<ScanItem, unknown>();
    for (const item of input.items) {
      try {
        scanAllOf({ inputs: [], items: [item], skipped: [], errors: [] }, ...rest);
      } catch (e) {
        crashes.set(item, e);
      }
    }
    // No single resource crashes: a stack rule over them together does; that is not one file's fault.
    if (crashes.size === 0) throw first;
    const errors = [...input.errors];
    for (const [item, e] of crashes)
      errors.push({
        location: item.resource.location,
        message: internalError(`judging ${item.resource.kind}/${item.name}`, e, verbose),
      });
    return scanAllOf({ ...input, items: input.items.filter((i) => !crashes.has(i)), errors }, ...rest);
  }
}
