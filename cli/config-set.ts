/**
 * `sandbox config set <stack> <key> [--secret]`: sets one key of a stack's config with the toolkit's own Pulumi CLI,
 * the stack's own backend and secrets provider (the same ones `up` uses), so that a credential is stored encrypted in
 * `stacks/Pulumi.<stack>.yaml`. The value comes from standard input or a hidden prompt, never the command line, and
 * is never printed.
 */
import { spawnSync } from "node:child_process";
import { inspectToolchain, pulumiHome } from "../toolchain/pulumi";
import { engineEnv } from "./engine-env";
import { type Io, Reporter } from "./output";

const USAGE =
  "usage: sandbox config set <stack> <key> [--secret] (the value on standard input or at a prompt)";
/** A config key as Pulumi takes it: `namespace:name`, the name possibly dotted. */
const CONFIG_KEY = /^[A-Za-z][A-Za-z0-9_-]*:[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

export async function runConfigCommand(
  args: readonly string[],
  c: { readonly io: Io; readonly json: boolean; readonly root: string; readonly env: NodeJS.ProcessEnv },
): Promise<number> {
  const rep = new Reporter(c.io, c.json, false);
  const secret = args.includes("--secret");
  const positional = args.filter((a) => a !== "--secret");
  const [sub, stack = "", rawKey, ...extra] = positional;
  const fail = (message: string, exitCode = 2, kind = "bad-input") =>
    rep.failure({ verb: "config", stack, ok: false, exitCode, error: { kind, message } });
  const unknown = positional.find((a) => a.startsWith("-"));
  if (unknown !== undefined) return fail(`config: unknown option ${JSON.stringify(unknown)}; ${USAGE}`);
  if (sub !== "set" || stack === "" || rawKey === undefined || extra.length > 0) return fail(USAGE);
  if (!/^[A-Za-z0-9_.-]+$/.test(stack))
    return fail(`config: stack ${JSON.stringify(stack)}: a stack name uses letters, digits, _, . and - only`);
  const key = rawKey.includes(":") ? rawKey : `sandbox:${rawKey}`;
  if (!CONFIG_KEY.test(key)) {
    return fail(
      `config: key ${JSON.stringify(rawKey)}: expected namespace:name (e.g. sandbox:githubToken), letters, digits, _, . and -`,
    );
  }
  if (c.io.readValue === undefined)
    return fail("config set: there is no standard input or terminal to read the value from");
  let value: string;
  try {
    value = await c.io.readValue(`value of ${key}${secret ? " (not shown)" : ""}: `);
  } catch (e) {
    return fail(`config set: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (value === "")
    return fail(`config set: the value of ${key} is empty; give it on standard input or at the prompt`);
  const toolchain = inspectToolchain(c.root, [], c.env);
  const cli = toolchain.pulumi?.path;
  if (cli === undefined) {
    return fail(
      `config set: the Pulumi CLI is missing (${toolchain.missing.join("; ")}); \`./sandbox up <stack>\` builds it`,
      3,
      "missing-tool",
    );
  }
  const env = { ...c.env, ...engineEnv(c.root, c.env), PULUMI_HOME: pulumiHome(c.root, c.env) };
  const pulumi = (argv: string[], input?: string) =>
    spawnSync(cli, [...argv, "--non-interactive"], {
      cwd: c.root,
      env,
      input,
      encoding: "utf8",
      timeout: 120_000,
    });
  // The stack exists in the backend (made when missing: its secrets provider needs it), then the key is set.
  const select = pulumi(["stack", "select", "--create", stack]);
  if (select.status !== 0) return fail(`config set: stack ${stack}: ${said(select)}`, 1, "engine");
  const set = pulumi(
    ["config", "set", key, ...(secret ? ["--secret"] : ["--plaintext"]), "--stack", stack],
    value,
  );
  if (set.status !== 0)
    return fail(`config set ${key}: ${said(set).split(value).join("<value>")}`, 1, "engine");
  return rep.result(
    { verb: "config", stack, ok: true, exitCode: 0, key, secret },
    `${key} set on stack ${stack}${secret ? " as a secret (encrypted in the stack's config file)" : ""}`,
  );
}

/** The CLI's own words about a failure (its error lines), never its command line. */
function said(r: ReturnType<typeof spawnSync>): string {
  const text = `${String(r.stderr ?? "")}${String(r.stdout ?? "")}`;
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  return (lines.find((l) => l.startsWith("error:")) ?? lines.at(-1) ?? `exit ${String(r.status)}`).replace(
    /^error: /,
    "",
  );
}
