/**
 * `scan`: the CrossGuard pack's rules over files, without a stack. Reads Kubernetes YAML (files, folders, standard
 * input such as `helm template` output), Compose files, `pulumi preview --json`, `pulumi stack export`, the
 * runtime's launch spec and Engine API create bodies; prints a text, JSON or SARIF 2.1.0 report.
 * Exit codes: 0 no mandatory rule fails, 1 one does, 2 bad input (an unreadable file, config or argument).
 *
 *   npm run scan -- k8s/ compose.yaml preview.json --format sarif --output scan.sarif
 *   helm template chart | npm run scan -- - --stdin-name chart/rendered.yaml
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { isPreset, PRESETS, type Preset } from "../policy/presets";
import { formatJson } from "../policy/report/json";
import { formatSarif } from "../policy/report/sarif";
import { formatText } from "../policy/report/text";
import { disallowUnjudgedWorkloads } from "../policy/rules/disallow-unjudged-workloads";
import { COMPOSE_SPEC } from "../policy/sources/compose/schema.generated";
import { ENGINE_API } from "../policy/sources/docker/schema.generated";
import { DEFAULT_MAX_DEPTH } from "../policy/sources/text/limits";
import { disallowUnjudgedReferences } from "../policy/stack/disallow-unjudged-references";
import { buildVersion } from "./build-id";
import { collect, internalError, judgeIsolating, parseSize } from "./scan/collect";
import { ConfigError, readScanConfig, type ScanConfig, toPackConfig } from "./scan/config";
import { MIB } from "./scan/files";
import { SCAN_RULES, scanItems as scanAll } from "./scan/run";

export const SCAN_USAGE = `usage: sandbox scan [options] <file | folder | ->...

Judges Kubernetes manifests (multi-document YAML, List kinds), Compose files, \`pulumi preview --json\`,
\`pulumi stack export\`, the runtime's launch spec and Docker Engine API create bodies with the policy pack's rules.
A folder is read recursively (*.yaml, *.yml, *.json in any case, hidden folders too; .git and node_modules are
listed as skipped, as are other files, and with --fail-on-unjudged a skipped folder holding such files is an
error); - reads standard input (e.g. \`helm template\` output).

options:
  --format text|json|sarif   report format (default text)
  --output <file>            write the report there instead of standard output
  --config <file>            pack config, as \`pulumi preview --policy-pack-config\` takes it (levels, settings),
                             plus exemptions: [{ rule, resource, reason }]; every exemption needs a reason
  --stdin-name <name>        the file name to report for standard input (default <stdin>)
  --category <id>            SARIF automation id, GitHub's upload category (default sandbox-projects-scan/)
  --preset <name>            start every rule's level from a preset: baseline, restricted, sandbox (every rule
                             mandatory) or gvisor (the strictest: sandbox, and every workload under gVisor:
                             Docker runtime runsc, Kubernetes RuntimeClass gvisor); the config's own levels and
                             settings still win; a config naming another preset is refused
  --print-pack-config        print the config (preset, levels, exemptions) as \`--policy-pack-config\` takes it, and
                             scan nothing
  --max-file-size <size>     refuse a file larger than this (default 32M; bytes, or with K, M, G)
  --max-total-size <size>    stop reading once the inputs reach this (default 256M)
  --max-depth <n>            refuse YAML or JSON nested deeper than this, aliases expanded (default ${DEFAULT_MAX_DEPTH})
  --verbose                  with an internal error, print its stack trace
  --allow-unjudged <kind>    accept objects of this kind that may create workloads the rules cannot read (a
                             Kubernetes kind, e.g. HelmRelease, or a Pulumi type's last part, e.g. Chart); each is
                             reported as exempted, with the option as its reason; repeat for more kinds
  --no-fail-on-unjudged      report every such object at advisory level instead of failing (all kinds at once)
  --fail-on-unjudged         the default: an object that may create workloads the rules cannot read (a Helm
                             release or chart, a config group, a patch, an unknown kind naming an image, a skipped
                             .git or node_modules holding .yaml, .yml or .json files) fails the scan
  --ci                       run as a CI gate: unjudged objects fail, as by default, and so does a mandatory
                             rule's check that could not be made (a value not known until the update in a
                             \`pulumi preview --json\`: the pack judges it again at \`up\`, a gate on the preview
                             never does); without --ci such a check is a note

Fail closed is the default: what the rules cannot read fails the scan in every mode. Fields are judged against the
engines' own schemas (Engine API ${ENGINE_API.apiVersion} from ${ENGINE_API.module} ${ENGINE_API.version},
Compose from ${COMPOSE_SPEC.module} ${COMPOSE_SPEC.version}): a field outside them, or one the project refuses,
fails sandbox-disallow-unjudged-fields; a pack config can accept named fields (allowFields).

An option given twice with two values is refused (exit 2), as are --fail-on-unjudged with --no-fail-on-unjudged.

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
  preset?: Preset;
  printPackConfig?: boolean;
  maxFileBytes: number;
  maxTotalBytes: number;
  maxDepth: number;
  verbose?: boolean;
  /** undefined: on (fail closed); off only with --no-fail-on-unjudged. */
  failOnUnjudged?: boolean;
  /** Kinds whose unjudged objects are accepted, each reported as an exemption. */
  allowUnjudged: string[];
  ci?: boolean;
  paths: string[];
}

/** Options that take one value: each may be given once (or again with the same value). */
const ONCE = new Set([
  "--format",
  "--output",
  "--config",
  "--stdin-name",
  "--category",
  "--preset",
  "--max-file-size",
  "--max-total-size",
  "--max-depth",
]);

function parseArgs(argv: readonly string[]): Options | string {
  const o: Options = {
    format: "text",
    stdinName: "<stdin>",
    paths: [],
    allowUnjudged: [],
    maxFileBytes: 32 * MIB,
    maxTotalBytes: 256 * MIB,
    maxDepth: DEFAULT_MAX_DEPTH,
  };
  // An option given twice with two values is refused, naming both: the last one winning silently would let a
  // wrapper's `--preset baseline` undo the `--preset sandbox` before it.
  const given = new Map<string, { flag: string; value: string }>();
  const conflict = (key: string, flag: string, v: string | undefined): string | undefined => {
    const first = given.get(key);
    if (first === undefined) {
      given.set(key, { flag, value: v ?? "" });
      return undefined;
    }
    if (first.flag === flag && first.value === (v ?? "")) return undefined;
    const show = (f: string, x: string) => (x === "" ? f : `${f} ${JSON.stringify(x)}`);
    return `${show(first.flag, first.value)} and ${show(flag, v ?? "")} contradict each other; give one`;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    const [flag, inline] =
      a.startsWith("--") && a.includes("=")
        ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
        : [a, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    if (ONCE.has(flag)) {
      const problem = conflict(flag, flag, inline ?? argv[i + 1]);
      if (problem !== undefined) return problem;
    } else if (flag === "--fail-on-unjudged" || flag === "--no-fail-on-unjudged") {
      const problem = conflict("fail-on-unjudged", flag, undefined);
      if (problem !== undefined) return problem;
    }
    switch (flag) {
      case "--format": {
        const f = value();
        if (f !== "text" && f !== "json" && f !== "sarif")
          return `--format must be text, json or sarif, not ${JSON.stringify(f)}`;
        o.format = f;
        break;
      }
      case "--allow-unjudged": {
        const v = value();
        if (v === undefined || !/^[A-Za-z][A-Za-z0-9]*$/.test(v))
          return `--allow-unjudged needs a kind (letters and digits, e.g. HelmRelease), not ${JSON.stringify(v ?? "")}`;
        o.allowUnjudged.push(v);
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
      case "--fail-on-unjudged":
      case "--no-fail-on-unjudged":
      case "--ci":
        if (inline !== undefined) return `${flag} takes no value`;
        if (flag === "--ci") o.ci = true;
        else o.failOnUnjudged = flag === "--fail-on-unjudged";
        break;
      case "--preset": {
        const v = value();
        if (!isPreset(v)) return `--preset must be one of ${PRESETS.join(", ")}, not ${JSON.stringify(v)}`;
        o.preset = v;
        break;
      }
      case "--max-file-size":
      case "--max-total-size": {
        const v = value();
        const n = parseSize(v);
        if (n === undefined)
          return `${flag} must be a size in bytes, or with K, M or G (1024-based), not ${JSON.stringify(v)}`;
        if (flag === "--max-file-size") o.maxFileBytes = n;
        else o.maxTotalBytes = n;
        break;
      }
      case "--max-depth": {
        const v = value();
        const n = v !== undefined && /^\d+$/.test(v) ? Number(v) : Number.NaN;
        // Past about 10000 levels the readers' recursion itself is at risk: the cap exists to keep them safe.
        if (!(n >= 1 && n <= 10_000))
          return `--max-depth must be a whole number from 1 to 10000, not ${JSON.stringify(v)}`;
        o.maxDepth = n;
        break;
      }
      case "--print-pack-config":
      case "--verbose":
        if (inline !== undefined) return `${flag} takes no value`;
        if (flag === "--verbose") o.verbose = true;
        else o.printPackConfig = true;
        break;
      case "--":
        o.paths.push(...argv.slice(i + 1));
        i = argv.length;
        break;
      default:
        if (a.startsWith("--")) return `unknown option ${a}`;
        o.paths.push(a);
    }
  }
  if (o.paths.length === 0 && o.printPackConfig !== true)
    return "name at least one file or folder to scan (- for standard input)";
  return o;
}

/** The toolkit's version, for the report (a checkout's says it is unreleased, see cli/build-id.ts). */
export function toolVersion(): string {
  // From a checkout this file is cli/scan.ts; in the installed package it is dist/cli/scan.js.
  for (const up of ["..", "../.."]) {
    try {
      const pkg = JSON.parse(readFileSync(resolve(__dirname, up, "package.json"), "utf8")) as {
        version?: string;
      };
      return buildVersion(resolve(__dirname, up), pkg.version ?? "0.0.0");
    } catch {
      // not at this level
    }
  }
  return "0.0.0";
}

/** Loads `--config`: JSON (or YAML, which JSON is part of). */
function loadConfig(path: string | undefined, cwd: string, preset: Preset | undefined): ScanConfig {
  const options = preset === undefined ? {} : { preset };
  if (path === undefined) return readScanConfig({}, SCAN_RULES, "(none)", options);
  let raw: unknown;
  try {
    const text = readFileSync(resolve(cwd, path), "utf8");
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([`cannot be read as JSON: ${(e as Error).message}`], path);
  }
  return readScanConfig(raw, SCAN_RULES, path, options);
}

/**
 * Runs `scan` with its arguments (after the verb). Returns the exit code; never throws: bad input is 2, and so is an
 * internal error, reported in one line (its stack only with --verbose), never as 1, which means a rule failed.
 */
export async function runScan(argv: readonly string[], io: Io, env: ScanEnv = {}): Promise<number> {
  try {
    return await scanCommand(argv, io, env);
  } catch (e) {
    io.err(`${internalError("scanning", e, argv.includes("--verbose"))}\n`);
    return 2;
  }
}

async function scanCommand(argv: readonly string[], io: Io, env: ScanEnv): Promise<number> {
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
  // Judging, with resources whose judging crashes reported as internal errors (the others are still judged).
  const scanItems = (...args: Parameters<typeof scanAll>) => judgeIsolating(scanAll, opts.verbose, ...args);
  let config: ScanConfig;
  try {
    config = loadConfig(opts.config, cwd, opts.preset);
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(`${e.message}\nNothing was scanned.\n`);
      return 2;
    }
    throw e;
  }
  if (opts.printPackConfig === true) {
    io.out(`${JSON.stringify(toPackConfig(config, SCAN_RULES), null, 2)}\n`);
    return 0;
  }
  // Fail closed in every mode; CI mode also fails on mandatory checks that could not be made (below).
  const failOnUnjudged = opts.failOnUnjudged ?? true;
  if (opts.allowUnjudged.length > 0)
    config = {
      ...config,
      exemptions: [
        ...config.exemptions,
        ...opts.allowUnjudged.flatMap((kind) =>
          [disallowUnjudgedWorkloads.id, disallowUnjudgedReferences.id].map((rule) => ({
            rule,
            resource: `*:${kind}/*`,
            reason: `accepted on the command line: --allow-unjudged ${kind}`,
          })),
        ),
      ],
    };
  const input = collect(opts.paths, env, opts.stdinName, { ...opts, failOnUnjudged });
  const report = scanItems(
    input,
    config,
    { name: "sandbox-projects-scan", version: toolVersion() },
    { failOnUnjudged, failOnUnchecked: opts.ci === true },
  );
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
      process.stderr.write(`${internalError("scanning", e, process.argv.includes("--verbose"))}\n`);
      process.exitCode = 2;
    },
  );
}
