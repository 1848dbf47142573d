/**
 * `scan`: the CrossGuard pack's rules over files, without a stack. Reads Kubernetes YAML (files, folders, standard
 * input such as `helm template` output), Compose files, `pulumi preview --json`, `pulumi stack export`, the
 * runtime's launch spec and Engine API create bodies; prints a text, JSON or SARIF 2.1.0 report.
 * Exit codes: 0 no mandatory rule fails, 1 one does, 2 bad input (an unreadable file, config or argument).
 *
 *   npm run scan -- k8s/ compose.yaml preview.json --format sarif --output scan.sarif
 *   helm template chart | npm run scan -- - --stdin-name chart/rendered.yaml
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { formatJson } from "../policy/report/json";
import type { InputError, Skipped } from "../policy/report/model";
import { formatSarif } from "../policy/report/sarif";
import { formatText } from "../policy/report/text";
import { ConfigError, readScanConfig, type ScanConfig } from "./scan/config";
import { type InputHost, parseInput, type ScanItem } from "./scan/documents";
import { SCAN_RULES, scanItems } from "./scan/run";

export const SCAN_USAGE = `usage: sandbox scan [options] <file | folder | ->...

Judges Kubernetes manifests (multi-document YAML, List kinds), Compose files, \`pulumi preview --json\`,
\`pulumi stack export\`, the runtime's launch spec and Docker Engine API create bodies with the policy pack's rules.
A folder is read recursively (*.yaml, *.yml, *.json); - reads standard input (e.g. \`helm template\` output).

options:
  --format text|json|sarif   report format (default text)
  --output <file>            write the report there instead of standard output
  --config <file>            pack config, as \`pulumi preview --policy-pack-config\` takes it (levels, settings),
                             plus exemptions: [{ rule, resource, reason }]; every exemption needs a reason
  --stdin-name <name>        the file name to report for standard input (default <stdin>)
  --category <id>            SARIF automation id, GitHub's upload category (default sandbox-projects-scan/)

exit codes: 0 no mandatory rule fails, 1 a mandatory rule fails, 2 bad input`;

export type ScanFormat = "text" | "json" | "sarif";

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

export interface ScanEnv {
  /** Where relative paths are read from and reported against. */
  readonly cwd?: string;
  /** Standard input, read only when `-` is given. */
  readonly readStdin?: () => string;
  /** The environment Compose files are interpolated from (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

interface Options {
  format: ScanFormat;
  output?: string;
  config?: string;
  stdinName: string;
  category?: string;
  paths: string[];
}

function parseArgs(argv: readonly string[]): Options | string {
  const o: Options = { format: "text", stdinName: "<stdin>", paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    const [flag, inline] =
      a.startsWith("--") && a.includes("=")
        ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
        : [a, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case "--format": {
        const f = value();
        if (f !== "text" && f !== "json" && f !== "sarif")
          return `--format must be text, json or sarif, not ${JSON.stringify(f)}`;
        o.format = f;
        break;
      }
      case "--output":
      case "--config":
      case "--stdin-name":
      case "--category": {
        const v = value();
        if (v === undefined || v === "") return `${flag} needs a value`;
        if (flag === "--output") o.output = v;
        else if (flag === "--config") o.config = v;
        else if (flag === "--stdin-name") o.stdinName = v;
        else o.category = v;
        break;
      }
      case "--":
        o.paths.push(...argv.slice(i + 1));
        i = argv.length;
        break;
      default:
        if (a.startsWith("--")) return `unknown option ${a}`;
        o.paths.push(a);
    }
  }
  if (o.paths.length === 0) return "name at least one file or folder to scan (- for standard input)";
  return o;
}

const EXTENSIONS = [".yaml", ".yml", ".json"];

/** Files of a folder, recursively, in a stable order; hidden folders and node_modules are left out. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!entry.name.startsWith(".") && entry.name !== "node_modules") out.push(...walk(p));
    } else if (EXTENSIONS.some((e) => entry.name.endsWith(e))) out.push(p);
  }
  return out;
}

/** Reads every input into resources; missing paths and unreadable files are errors, never a crash. */
export function collect(
  paths: readonly string[],
  env: ScanEnv,
  stdinName = "<stdin>",
): { inputs: string[]; items: ScanItem[]; skipped: Skipped[]; errors: InputError[] } {
  const cwd = env.cwd ?? process.cwd();
  const inputs: string[] = [];
  const items: ScanItem[] = [];
  const skipped: Skipped[] = [];
  const errors: InputError[] = [];
  const show = (abs: string) => {
    const r = relative(cwd, abs);
    return r === "" ? "." : r.split("\\").join("/");
  };
  const host = (path: string | undefined): InputHost => ({
    ...(path === undefined ? {} : { path }),
    readFile: (p) => readFileSync(p, "utf8"),
    env: env.env ?? process.env,
  });
  const read = (name: string, text: string, path?: string) => {
    inputs.push(name);
    const parsed = parseInput(name, text, host(path));
    items.push(...parsed.items);
    skipped.push(...parsed.skipped);
    errors.push(...parsed.errors);
  };
  for (const p of paths) {
    if (p === "-") {
      read(stdinName, env.readStdin === undefined ? readFileSync(0, "utf8") : env.readStdin());
      continue;
    }
    const abs = resolve(cwd, p);
    let files: string[];
    try {
      files = statSync(abs).isDirectory() ? walk(abs) : [abs];
    } catch {
      errors.push({ location: { file: p }, message: "no such file or folder" });
      continue;
    }
    for (const f of files) {
      let text: string;
      try {
        text = readFileSync(f, "utf8");
      } catch (e) {
        errors.push({ location: { file: show(f) }, message: `cannot be read: ${(e as Error).message}` });
        continue;
      }
      read(show(f), text, f);
    }
  }
  return { inputs, items, skipped, errors };
}

/** The toolkit's version, for the report. */
export function toolVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(resolve(__dirname, "..", "package.json"), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** Loads `--config`: JSON (or YAML, which JSON is part of). */
function loadConfig(path: string | undefined, cwd: string): ScanConfig {
  if (path === undefined) return readScanConfig({}, SCAN_RULES, "(none)");
  let raw: unknown;
  try {
    const text = readFileSync(resolve(cwd, path), "utf8");
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([`cannot be read as JSON: ${(e as Error).message}`], path);
  }
  return readScanConfig(raw, SCAN_RULES, path);
}

/** Runs `scan` with its arguments (after the verb). Returns the exit code; never throws for bad input. */
export async function runScan(argv: readonly string[], io: Io, env: ScanEnv = {}): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.out(`${SCAN_USAGE}\n`);
    return 0;
  }
  const opts = parseArgs(argv);
  if (typeof opts === "string") {
    io.err(`${SCAN_USAGE}\n\n${opts}\n`);
    return 2;
  }
  const cwd = env.cwd ?? process.cwd();
  let config: ScanConfig;
  try {
    config = loadConfig(opts.config, cwd);
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(`${e.message}\nNothing was scanned.\n`);
      return 2;
    }
    throw e;
  }
  const input = collect(opts.paths, env, opts.stdinName);
  const report = scanItems(input, config, { name: "sandbox-projects-scan", version: toolVersion() });
  const body =
    opts.format === "json"
      ? formatJson(report)
      : opts.format === "sarif"
        ? formatSarif(report, opts.category === undefined ? {} : { category: opts.category })
        : formatText(report);
  if (opts.output === undefined) io.out(body);
  else {
    writeFileSync(resolve(cwd, opts.output), body);
    // The file is for machines; a person still gets the verdict.
    const text = formatText(report).trimEnd().split("\n");
    io.err(`${opts.format === "text" ? (text.at(-1) ?? "") : text.join("\n")}\n`);
  }
  return report.exitCode;
}

if (require.main === module) {
  // `npm run scan` runs from the package root; INIT_CWD is where the user typed it, which relative paths mean.
  runScan(
    process.argv.slice(2),
    { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) },
    { cwd: process.env.INIT_CWD ?? process.cwd() },
  ).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 2;
    },
  );
}
