import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { RuntimeClassSettingsSchema } from "../components/kubernetes/runtime-class";
import {
  brokerCredentialValue,
  brokerSpec,
  joinKey,
  parseOrThrow,
  REDACT,
  type ResolvedProject,
  resolveProject,
  SpecError,
  type SpecProblem,
  strictObject,
} from "../components/model";
import { closestKey, nearNamespaceProblems } from "./near-keys";

/** The Pulumi config namespace of the sandbox project (the `name` in Pulumi.yaml). */
export const CONFIG_NAMESPACE = "sandbox";

/** The keys a stack config may set under `sandbox:`; each maps to the project field of the same name. */
export const CONFIG_KEYS = [
  "name",
  "backend",
  "enabled",
  "budget",
  "network",
  "jobRoot",
  "probe",
  "agents",
  "alerts",
  "broker",
  "templates",
] as const;

/** Keys that configure where the project runs and keeps its books rather than what it is. */
export const BACKEND_KEYS = ["kubernetes", "ledger"] as const;

/** Where a Kubernetes project runs: a kubeconfig file and a context in it. Defaults to the ambient kubeconfig. */
export const KubernetesTargetSchema = strictObject({
  /** Path to a kubeconfig file. Defaults to `KUBECONFIG` or `~/.kube/config`. */
  kubeconfig: z.string({ error: "kubeconfig must be the path of a kubeconfig file" }).min(1).optional(),
  /** The context to use. Defaults to the kubeconfig's current context. */
  context: z.string({ error: "context must be a context name in the kubeconfig" }).min(1).optional(),
  /**
   * Per stronger runtime (`runsc`, `kata`): `create` (default true) makes the project create the RuntimeClass its
   * pods name (`gvisor`, `kata`); `handler` is the node runtime it selects (default `runsc`, `kata`).
   */
  runtimeClasses: RuntimeClassSettingsSchema.optional(),
});
export type KubernetesTarget = z.output<typeof KubernetesTargetSchema>;

/**
 * Where the project's ledger is kept. Defaults to a SQLite file beside the project's job root on this machine
 * (`<jobRoot>.ledger.sqlite`), so every checkout and every launcher of the project on the machine keeps one book;
 * `url` names a shared ledger on a PostgreSQL server instead, one book for launchers on every machine (its password
 * never in the config: in `PGPASSWORD`, or a `.pgpass` file). `SANDBOX_LEDGER` in the environment overrides both.
 */
export const LedgerTargetSchema = strictObject({
  /** The ledger's file: an absolute path without `..`. */
  file: z
    .string({ error: "file must be an absolute path of the ledger's file" })
    .regex(/^\/[^\0]*[^/]$/, { error: "file must be an absolute path of the ledger's file (not a folder)" })
    .refine((p) => !p.split("/").includes(".."), { error: "file must not contain .. segments" })
    .optional(),
  /** A shared ledger's PostgreSQL URL (`postgresql://user@host:5432/db`), without a password. */
  url: z
    .string({ error: "url must be a PostgreSQL URL (postgresql://user@host/database)" })
    .superRefine((u, ctx) => {
      const problem = ledgerUrlProblem(u);
      // A URL that may hold a password is never printed.
      if (problem !== undefined)
        ctx.addIssue({ code: "custom", params: REDACT, message: `${problem} (the value is not shown)` });
    })
    .optional(),
}).refine((t) => t.file === undefined || t.url === undefined, {
  error: "give the ledger a file or a url, not both",
});

/** What is wrong with a shared ledger's URL, or undefined when it is usable. */
export function ledgerUrlProblem(url: string): string | undefined {
  if (!/^postgres(ql)?:\/\//.test(url))
    return "url must be a PostgreSQL URL (postgresql://user@host/database)";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "url must be a PostgreSQL URL (postgresql://user@host/database); this one does not parse";
  }
  if (parsed.password !== "" || parsed.searchParams.has("password"))
    return "url must not hold the password: give it in PGPASSWORD (or a .pgpass file), never in the config";
  return undefined;
}
export type LedgerTarget = z.output<typeof LedgerTargetSchema>;

/** The schema of each backend key's value. */
export const BACKEND_SCHEMAS: Readonly<Record<(typeof BACKEND_KEYS)[number], z.ZodType>> = {
  kubernetes: KubernetesTargetSchema,
  ledger: LedgerTargetSchema,
};

/** Reads `sandbox:ledger` from the config map (absent: the default place). */
export function ledgerTargetFromConfig(all: Readonly<Record<string, string>>): LedgerTarget {
  const raw = all[`${CONFIG_NAMESPACE}:ledger`];
  return parseOrThrow(
    LedgerTargetSchema,
    raw === undefined ? {} : decodeConfigValue(raw),
    `${CONFIG_NAMESPACE}:ledger`,
    "invalid sandbox project config",
  );
}

/** Reads `sandbox:kubernetes` from the config map (absent: the ambient kubeconfig). */
export function kubernetesTargetFromConfig(all: Readonly<Record<string, string>>): KubernetesTarget {
  const raw = all[`${CONFIG_NAMESPACE}:kubernetes`];
  return parseOrThrow(
    KubernetesTargetSchema,
    raw === undefined ? {} : decodeConfigValue(raw),
    `${CONFIG_NAMESPACE}:kubernetes`,
    "invalid sandbox project config",
  );
}

/**
 * A config value as the engine hands it over: structured values arrive as JSON text, scalars as plain text.
 * `false` and `3` become a boolean and a number; `lots` stays the string `lots` for the schema to refuse.
 */
export function decodeConfigValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * Reads the project from a stack's whole config (the `namespace:key` → raw text map the engine provides), checks
 * it, and proves its budget. One SpecError names every bad key as `sandbox:<key>`, its value and what is allowed.
 * An unknown `sandbox:` key is refused too, so a typo never silently drops a wall.
 */
export function projectFromConfig(all: Readonly<Record<string, string>>, stack: string): ResolvedProject {
  const prefix = `${CONFIG_NAMESPACE}:`;
  const raw: Record<string, unknown> = {};
  const unknown: string[] = [];
  const allowed: readonly string[] = [...CONFIG_KEYS, ...BACKEND_KEYS];
  // The keys the broker's routes name as their credentials' sources are the stack's own, not typos.
  const credentialKeys = namedCredentialKeys(all[`${prefix}broker`]);
  for (const [fullKey, value] of Object.entries(all)) {
    if (!fullKey.startsWith(prefix)) continue;
    const key = fullKey.slice(prefix.length);
    if ((CONFIG_KEYS as readonly string[]).includes(key)) raw[key] = decodeConfigValue(value);
    else if (!(BACKEND_KEYS as readonly string[]).includes(key) && !credentialKeys.has(fullKey))
      unknown.push(key);
  }
  // Keys meant for the project but outside its namespace would be ignored without a word: refuse them too.
  const outside = nearNamespaceProblems(Object.keys(all), CONFIG_NAMESPACE, allowed);
  // Every problem in one pass: the keys nobody reads, then what the known keys say (schema, budget, cross-field).
  const keyProblems = [
    ...unknown.sort().map((k) => {
      const near = closestKey(k.split(".")[0] ?? k, allowed);
      return {
        key: joinKey(prefix, k),
        value: undefined,
        message: `unknown config key${near === undefined ? "" : ` (did you mean "${prefix}${near}"?)`}; allowed keys: ${allowed.map((c) => prefix + c).join(", ")}`,
      };
    }),
    ...outside,
  ];
  // The backend keys' values are judged in the same pass (an unreadable ledger place would fail every verb later).
  const backendProblems: SpecProblem[] = [];
  for (const key of BACKEND_KEYS) {
    const value = all[`${prefix}${key}`];
    if (value === undefined) continue;
    try {
      parseOrThrow(BACKEND_SCHEMAS[key], decodeConfigValue(value), `${prefix}${key}`, "invalid");
    } catch (e) {
      if (!(e instanceof SpecError)) throw e;
      backendProblems.push(...e.problems);
    }
  }
  keyProblems.push(...backendProblems);
  if (raw.name === undefined) raw.name = defaultProjectName(stack);
  let resolved: ResolvedProject | undefined;
  let problems: readonly SpecProblem[] = [];
  try {
    resolved = resolveProject(raw, prefix);
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    problems = e.problems;
  }
  if (keyProblems.length > 0 || resolved === undefined)
    throw new SpecError([...keyProblems, ...problems], "invalid sandbox project config");
  return resolved;
}

/** The config keys `sandbox:broker` names as credential sources (read loosely: the schema judges the rest). */
function namedCredentialKeys(rawBroker: string | undefined): Set<string> {
  const keys = new Set<string>();
  const broker = rawBroker === undefined ? undefined : decodeConfigValue(rawBroker);
  const routes = (broker as { routes?: unknown } | undefined)?.routes;
  if (routes === null || typeof routes !== "object") return keys;
  for (const route of Object.values(routes as Record<string, unknown>)) {
    const secret = (route as { credential?: { secret?: unknown } } | null)?.credential?.secret;
    if (typeof secret === "string" && secret.length > 0) {
      keys.add(secret.includes(":") ? secret : `${CONFIG_NAMESPACE}:${secret}`);
    }
  }
  return keys;
}

/**
 * The broker's credentials from a stack's config, by route: each route a template calls must name a key that is
 * set, and set as a secret (`pulumi config set --secret`). `isSecret` says whether a key's value is stored
 * encrypted (the engine's list of secret keys in a program; the `secure:` form in a stack file at the front). Every
 * problem names the key and never the value.
 */
export function brokerCredentialsFromConfig(
  all: Readonly<Record<string, string>>,
  project: ResolvedProject,
  isSecret: (key: string) => boolean,
  /** False at the front, which reads a stack file's encrypted values and cannot judge them. */
  checkValues = true,
): Record<string, string> {
  const broker = brokerSpec(project, "", CONFIG_NAMESPACE);
  if (broker === undefined) return {};
  const out: Record<string, string> = {};
  const problems: SpecProblem[] = [];
  for (const ref of broker.credentials) {
    const key = `${CONFIG_NAMESPACE}:broker.routes.${ref.route}.credential.secret`;
    const value = all[ref.configKey];
    if (value === undefined) {
      problems.push({
        key,
        value: JSON.stringify(ref.configKey),
        message: `names a config key that is not set; set it with \`./sandbox config set <stack> ${ref.configKey} --secret\` (the value on standard input or at its prompt; \`pulumi config set --secret\` with the official CLI)`,
      });
    } else if (!isSecret(ref.configKey)) {
      problems.push({
        key: ref.configKey,
        value: undefined,
        message: `holds route ${ref.route}'s credential as plain text (the value is not shown); set it with \`./sandbox config set <stack> ${ref.configKey} --secret\` (the value on standard input or at its prompt; \`pulumi config set --secret\` with the official CLI)`,
      });
    } else if (checkValues) {
      const checked = brokerCredentialValue(value);
      if ("problem" in checked) {
        problems.push({
          key: ref.configKey,
          value: undefined,
          message: `the credential ${checked.problem} (the value is not shown)`,
        });
      } else out[ref.route] = value;
    }
  }
  if (problems.length > 0) throw new SpecError(problems, "invalid sandbox project config");
  return out;
}

/**
 * The front's check of the broker's credentials in a stack file, before the engine starts: each must be set, and
 * set as a secret (a `secure:` value, which the front cannot read and does not judge).
 */
export function checkBrokerCredentialKeys(
  all: Readonly<Record<string, string>>,
  project: ResolvedProject,
): void {
  const secure = (key: string) => {
    const v = all[key];
    const parsed = v === undefined ? undefined : decodeConfigValue(v);
    return (
      typeof parsed === "object" &&
      parsed !== null &&
      typeof (parsed as { secure?: unknown }).secure === "string"
    );
  };
  brokerCredentialsFromConfig(all, project, secure, false);
}

/** `sandbox-<stack>`, made into a valid project name. */
export function defaultProjectName(stack: string): string {
  const cleaned = `sandbox-${stack}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/-$/, "");
  return cleaned.slice(0, 32).replace(/-$/, "");
}

/** A stack's config file as the front looks it up: see {@link findStackFile}. */
export interface StackFile {
  /** The file's path relative to the folder the front runs on (the first place looked when none exists). */
  readonly file: string;
  readonly exists: boolean;
  /** Every place looked, in order. */
  readonly tried: readonly string[];
}

/**
 * Where the front finds a stack's config file, relative to the folder it runs on. A checkout keeps its stack files
 * in `stacks/` (its Pulumi.yaml's `stackConfigDir`): `stacks/Pulumi.<stack>.yaml`. The installed front runs in a
 * team's own folder and takes `Pulumi.<stack>.yaml` there, else `stacks/Pulumi.<stack>.yaml`.
 */
export function findStackFile(root: string, stack: string, installed: boolean): StackFile {
  const name = `Pulumi.${stack}.yaml`;
  const tried = installed ? [name, join("stacks", name)] : [join("stacks", name)];
  const found = tried.find((f) => existsSync(join(root, f)));
  return { file: found ?? tried[0] ?? name, exists: found !== undefined, tried };
}

/**
 * The `namespace:key` → raw text map the engine builds from a `Pulumi.<stack>.yaml` file: strings as they are,
 * everything else (numbers, booleans, mappings, lists) as JSON. Lets the front check a stack's config, with the
 * same messages as the program, before it starts the engine.
 */
export function configMapFromStackYaml(text: string, file: string): Record<string, string> {
  // A verb reads its stack's file more than once (checked, then for the ledger's place): the same text is parsed
  // once, and each caller gets a copy of its own.
  if (lastParsed?.text === text && lastParsed.file === file) return { ...lastParsed.map };
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    // With prettyErrors the first line of the message already ends in "at line L, column C:".
    const what = (doc.errors[0]?.message.split("\n")[0] ?? "").replace(/:$/, "");
    throw new SpecError(
      [{ key: file, value: undefined, message: `not valid YAML: ${what}` }],
      "invalid stack config file",
    );
  }
  const root = doc.toJS() as { config?: Record<string, unknown> } | null;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(root?.config ?? {})) {
    out[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  lastParsed = { text, file, map: { ...out } };
  return out;
}

/** The last stack file {@link configMapFromStackYaml} parsed, and what it gave. */
let lastParsed: { text: string; file: string; map: Readonly<Record<string, string>> } | undefined;

/**
 * The project name and job root the off switch needs, read from a config that may no longer be valid (a budget
 * that no longer fits must never keep the off switch from running). Each falls back to its default when its own
 * value is unusable: `sandbox:name` must be a valid project name, `sandbox:jobRoot` an absolute path without `..`.
 */
export function offTargetFromConfig(
  all: Readonly<Record<string, string>>,
  stack: string,
): { name: string; jobRoot: string } {
  const rawName = all[`${CONFIG_NAMESPACE}:name`];
  const name =
    rawName !== undefined && /^[a-z](?:[a-z0-9-]{0,30}[a-z0-9])?$/.test(rawName)
      ? rawName
      : defaultProjectName(stack);
  const rawRoot = all[`${CONFIG_NAMESPACE}:jobRoot`];
  const jobRoot =
    rawRoot !== undefined && /^\/./.test(rawRoot) && !rawRoot.split("/").includes("..")
      ? rawRoot
      : `/var/lib/sandbox-projects/${name}`;
  return { name, jobRoot };
}
