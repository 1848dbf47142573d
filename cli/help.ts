/**
 * Help that never acts: each verb's arguments, options, examples and exit codes, printed for `<verb> --help`,
 * `<verb> -h` and `help <verb>` before anything is read, built or started; the nearest verb for one that does not
 * exist; and shell completion. Nothing here loads a stack, a client or the engine.
 */
import { closestKey } from "../stacks/near-keys";
import type { Io } from "./output";

const STACK_EXITS =
  "exit codes: 0 done, 1 the engine failed or the policy pack refused, 2 bad input, 3 a tool is missing,\n" +
  "            130/143 cancelled (Ctrl-C once cancels and waits; twice kills)";
const TASK_EXITS =
  "exit codes: 0 every wall held (probe, escape) or nothing was left (off), 1 otherwise, 2 bad input,\n" +
  "            3 a missing image or no engine, 130/143 cancelled";
const LEDGER_EXITS = "exit codes: 0 done, 2 bad input (an unknown option, a bad --since)";
const OUTPUT =
  "  --json       one JSON document on stdout, nothing else there\n  --verbose    more detail (stderr)";

/** Each verb's help, as printed. */
export const VERB_HELP: Readonly<Record<string, string>> = {
  check: `usage: sandbox check [stack] [--json]

Validates stacks/Pulumi.<stack>.yaml (default stack: dev) and prints the plan: the budget arithmetic and every
template's walls. Deploys nothing, starts nothing.

${OUTPUT}

examples:
  sandbox check dev
  sandbox check staging --json

exit codes: 0 the config is valid, 2 it is not (each problem names the key, the value and what is allowed)`,
  preview: `usage: sandbox preview [stack] [--diff] [--json] [--verbose]

Checks the config, refreshes the stack's state (drift is listed) and previews the stack with the policy pack.
Changes nothing. Each object the engine would create, update, replace or delete is listed as it is planned; with
--diff the result names each step's changed keys and why (+ new in the program, ~ changed: keys, +- keys that
cannot change in place, - no longer in the program), and --json lists the steps (op, name, type, keys, reason).

${OUTPUT}
  --diff       each step with its changed keys and reason

examples:
  sandbox preview dev
  sandbox preview dev --diff

${STACK_EXITS}`,
  up: `usage: sandbox up <stack> [--json] [--verbose]

Checks the config, then deploys the stack with the policy pack (the main job); what drifted is put back, and the
probe's walls table is printed after. The stack is named on purpose: \`up\` creates, changes and deletes objects.

${OUTPUT}

examples:
  sandbox up dev

${STACK_EXITS}`,
  refresh: `usage: sandbox refresh [stack] [--json] [--verbose]

Checks the config, then refreshes the stack's state from the engine.

${OUTPUT}

examples:
  sandbox refresh dev

${STACK_EXITS}`,
  destroy: `usage: sandbox destroy <stack> [--yes] [--json] [--verbose]

Removes everything the stack deployed: the off switch, from the stack's state whatever the config says now. The
stack is named on purpose; on a terminal it asks first unless --yes.

  --yes        do not ask
${OUTPUT}

examples:
  sandbox destroy dev
  sandbox destroy dev --yes

${STACK_EXITS}`,
  run: `usage: sandbox run <stack> <template> [options] [-- command...]

Launches one task in a fresh hardened container of the template and exits with the task's own code.

  --file name=path   copy a host file into the job folder as name (repeatable)
  --dir path         copy a folder's contents into the job folder (repeatable)
  --out dir          copy the job folder's contents, as plain data, to a new or empty dir after the task
  --keep             keep the job folder after the task
  --agent name       the agent the task is for; needs one of its keys in SANDBOX_AGENT_KEY (see agent-key).
                     A key alone names its agent; no key and no agent: the operator's own run
  --env NAME=value   a variable for this task only (repeatable); judged by the pack like the template's (a
                     credential is refused), never one the toolkit sets (the proxy's, the broker's address)
  --timeout seconds  this task's deadline, at most the template's
  --wait[=seconds]   when every slot is busy, wait for one (at most 600 s, or seconds) instead of refusing
  -i, --stdin        give the task this command's standard input, streamed; its end closes the task's input
                     (without -i a task reads an empty input)
  --json             one JSON document on stdout: the task, its output, what --out left out

examples:
  sandbox run dev default --file run.sh=./task.sh
  sandbox run dev default --out ./result -- sh -c 'echo hi > out.txt'
  git diff | sandbox run dev default -i -- sh -c 'wc -l'

exit codes: the task's own (0-255); 124 killed at its deadline; 137 killed by its memory limit; 2 bad options or a
            launch the policy refused; 3 a missing image or no engine; 130/143 cancelled`,
  serve: `usage: sandbox serve <stack> [--pool N] [--listen 127.0.0.1:PORT] [--json]

The launch service: one process that keeps the stack's launcher, warm pool and ledger, and launches tasks for a
small HTTP API (docs/runtime.md) on a unix socket in .sandbox/serve/<stack>.sock (mode 0600, its owner only), and
with --listen on loopback TCP, where every launch carries an agent's key (Authorization: Bearer <key>). \`run\` goes
through it while it answers. It runs in the foreground, one log line per launch; SIGTERM or Ctrl-C stops it: no
new launch, the tasks in flight end (by their deadlines at the latest), the pool's members and the socket are
removed. A second signal stops the running tasks at once.

  --pool N                 members kept ready per template (default: the templates' pool.size, else none);
                           at most the budget's maxConcurrentTasks
  --listen 127.0.0.1:PORT  also answer on loopback TCP (127.0.0.0/8, [::1] or localhost; never another address)
  --json                   each log line as one JSON document on stdout

examples:
  sandbox serve dev
  sandbox serve dev --pool 2 --listen 127.0.0.1:7070

exit codes: 0 stopped cleanly, 1 it cannot listen or open the ledger, 2 bad options (a --listen address off
            loopback) or a service already answers for the stack, 3 no engine`,
  probe: `usage: sandbox probe <stack> [template...] [--json]

Proves every wall inside each template (all by default): declared against what the kernel says.

examples:
  sandbox probe dev
  sandbox probe dev default --json

${TASK_EXITS}`,
  escape: `usage: sandbox escape <stack> [template...] [--json]

Tries the four escapes (environment exfiltration, a write outside the job folder, a fork bomb, the metadata
address) in each template (all by default); each must be blocked.

examples:
  sandbox escape dev

${TASK_EXITS}`,
  off: `usage: sandbox off <stack> [--yes] [--json]

Removes every container, network, volume and job folder of the project (the stack's walls stay), whatever the
config says now. The stack is named on purpose; on a terminal it asks first unless --yes.

  --yes        do not ask

examples:
  sandbox off dev
  sandbox off dev --yes

${TASK_EXITS}`,
  spend: `usage: sandbox spend <stack> [--json]

The month to date from the ledger: spent, left, by template and agent, and the forecast. No engine needed.

examples:
  sandbox spend dev

${LEDGER_EXITS}`,
  audit: `usage: sandbox audit <stack> [--since t] [--agent a] [--json]

Each run the task verbs made: command, file hashes, exit, limits, egress decisions, charge.

  --since t    runs from t on (an ISO date or time, or a duration such as 24h)
  --agent a    runs of one agent

examples:
  sandbox audit dev --since 24h

${LEDGER_EXITS}`,
  alerts: `usage: sandbox alerts <stack> [--since t] [--json]

Budget alerts (80/90/100 %), refused launches and escape signals, from the ledger.

  --since t    alerts from t on

examples:
  sandbox alerts dev --since 2026-12-01

${LEDGER_EXITS}`,
  logs: `usage: sandbox logs <stack> proxy|broker [--template <name>] [--since <when>] [--json]

What the project's egress proxy decided (allowed or denied, with the reason: not on the template's allowlist, a
port the entry does not allow, a name that resolves to a refused range, an upstream that did not answer) or what
its secrets broker answered (route, method, path, status; never a credential), line by line, oldest first. On
Docker each template has its own proxy and broker; on Kubernetes the project has one of each, and the listener names
the template. --since takes a span back from now (30m, 12h, 7d) or an ISO date. Reads only.

examples:
  sandbox logs dev proxy
  sandbox logs dev broker --template agent --since 1h --json

exit codes: 0 shown, 1 the engine or the cluster could not be read, 2 bad input`,
  ledger: `usage: sandbox ledger reset <stack> [--yes] [--json]
       sandbox ledger copy <stack> [--to <url>] [--from <file>] [--json]
       sandbox ledger local <stack> [--stop] [--json]

The project's ledger is witnessed outside its file (in the job root): a ledger deleted, emptied or replaced is
refused by every verb that meters, so the month's spend never starts over from zero by accident, and a second
ledger for the same project is noticed. \`ledger reset\` starts a new one on purpose: the project's ledger
on this machine (beside the job root, or sandbox:ledger.file or .url, or SANDBOX_LEDGER; made when missing) becomes
the one the project is metered with. Nothing is deleted. On a terminal it asks first unless --yes.

\`ledger copy\` moves the project's history (runs, alerts, agents' keys, what its last up deployed) from its SQLite
file on this machine (--from, else SANDBOX_LEDGER or sandbox:ledger.file or beside the job root) into a shared
ledger on PostgreSQL (--to, else sandbox:ledger.url), in one transaction, and makes that ledger the project's. It
is refused while runs are open in the file, or when the shared ledger already holds history of the project. The
URL holds no password: give it in PGPASSWORD or ~/.pgpass. The file is left as it is.

\`ledger local\` starts this checkout's own PostgreSQL server for a shared ledger (Debian's postgresql package; its
data in .sandbox/postgres, a unix socket there and no TCP port) and prints its URL; --stop stops it, and so does the
off switch of a stack whose ledger is kept there. Its data is kept; asked again, it starts on it.

examples:
  sandbox ledger reset dev
  sandbox ledger copy dev --to 'postgresql://sandbox@db.internal/ledger'
  sandbox ledger local dev

exit codes: 0 done, 1 refused or the shared ledger did not answer, 2 bad input or not confirmed`,
  config: `usage: sandbox config set <stack> <key> [--secret] [--json]

Sets one key of the stack's config (stacks/Pulumi.<stack>.yaml) with the toolkit's own Pulumi CLI and the stack's
own backend and secrets provider, the ones \`up\` uses; with --secret the value is stored encrypted. The value is
read from standard input when it is piped, else at a prompt that does not echo it; never from the command line, and
never printed. A key without a namespace is the project's (sandbox:).

examples:
  ./sandbox config set dev sandbox:githubToken --secret
  printf %s "$TOKEN" | ./sandbox config set dev githubToken --secret

exit codes: 0 set, 1 the engine refused, 2 bad input, 3 the Pulumi CLI is missing`,
  "agent-key": `usage: sandbox agent-key <stack> <agent> [--revoke] [--json]

An agent is whoever holds one of its keys: a run for an agent needs the key in SANDBOX_AGENT_KEY, and a run with no
key and no agent is the operator's own. This mints a new key for an agent of the stack and prints it once (the
ledger keeps only its SHA-256; earlier keys stay valid), or with --revoke revokes every key of the agent.

examples:
  SANDBOX_AGENT_KEY="$(sandbox agent-key dev ci)" sandbox run dev default -- make test
  sandbox agent-key dev ci --revoke

exit codes: 0 done, 1 the ledger is gone, 2 bad input (an agent the stack does not name)`,
  scan: `usage: sandbox scan [options] <file|folder|->...

Judges Kubernetes YAML, Compose files, Engine API bodies, pulumi preview --json, stack exports and launch specs
with the policy pack's rules. \`sandbox scan --help\` lists every option.

examples:
  sandbox scan k8s/
  sandbox scan --ci --format sarif --output scan.sarif k8s/ compose.yaml

exit codes: 0 pass, 1 a mandatory rule fails (with --ci, also a mandatory check a value not known until the
update kept it from making), 2 bad input`,
  completion: `usage: sandbox completion bash|zsh

Prints a completion script for the shell: verbs, then the stacks of stacks/ (or of the folder you run in).

examples:
  source <(sandbox completion bash)        # in ~/.bashrc
  sandbox completion zsh > "\${fpath[1]}/_sandbox"

exit codes: 0 printed, 2 another shell`,
  help: `usage: sandbox help [verb]

Prints the usage of every verb, or one verb's arguments, options, examples and exit codes.`,
  test: `usage: sandbox test [vitest arguments]

The checkout's test suite: type check, lint, then every tier (unit, oracle, docker, stack, engine, node). Arguments go to vitest.`,
};

/** Every verb the front knows, for `did you mean` and completion. */
export const VERBS = Object.keys(VERB_HELP);

/**
 * Whether the arguments ask for help (`--help` or `-h` before a `--`): then nothing else in them is read, and nothing
 * runs. After `--`, they belong to the task's command.
 */
export function asksForHelp(args: readonly string[]): boolean {
  const dash = args.indexOf("--");
  const head = dash === -1 ? args : args.slice(0, dash);
  return head.includes("--help") || head.includes("-h");
}

/** The message for a verb that does not exist, with the nearest one. */
export function unknownVerb(verb: string): string {
  const near = closestKey(verb, VERBS);
  return `unknown command "${verb}"${near === undefined ? "" : `; did you mean "${near}"?`} (\`sandbox help\` lists every verb)`;
}

/** `sandbox completion <shell>`: the script on stdout (exit 0), or which shells there are (exit 2). */
export function completionVerb(shell: string | undefined, io: Io): number {
  const script = completionScript(shell ?? "");
  if (script === undefined) {
    io.err(`completion: name the shell, bash or zsh (got ${JSON.stringify(shell ?? "")})\n`);
    return 2;
  }
  io.out(script);
  return 0;
}

/** A completion script for bash or zsh: verbs first, then the stack names of the stack files. */
export function completionScript(shell: string): string | undefined {
  const verbs = VERBS.filter((v) => v !== "test").join(" ");
  const stacks =
    "(ls stacks/Pulumi.*.yaml Pulumi.*.yaml 2>/dev/null | sed -e 's#.*Pulumi\\.##' -e 's#\\.yaml$##')";
  if (shell === "bash")
    return `# bash completion for sandbox
_sandbox() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${verbs}" -- "$cur"))
  elif [ "$COMP_CWORD" -eq 2 ] && [ "\${COMP_WORDS[1]}" != scan ] && [ "\${COMP_WORDS[1]}" != help ]; then
    COMPREPLY=($(compgen -W "$${stacks}" -- "$cur"))
  elif [ "\${COMP_WORDS[1]}" = help ]; then
    COMPREPLY=($(compgen -W "${verbs}" -- "$cur"))
  fi
}
complete -F _sandbox sandbox ./sandbox
`;
  if (shell === "zsh")
    return `#compdef sandbox
_sandbox() {
  if (( CURRENT == 2 )); then
    compadd -- ${verbs}
  elif (( CURRENT == 3 )) && [[ \${words[2]} == help ]]; then
    compadd -- ${verbs}
  elif (( CURRENT == 3 )) && [[ \${words[2]} != scan ]]; then
    compadd -- $${stacks}
  fi
}
compdef _sandbox sandbox
`;
  return undefined;
}

/** The front's usage: every verb in a line or two. */
export const USAGE = `usage: sandbox <verb> [stack] [--json] [--verbose]
       sandbox <verb> --help | sandbox help <verb>    a verb's arguments, options, examples and exit codes
       sandbox --version                             the toolkit, the Pulumi CLI, Node and the providers
       sandbox completion bash|zsh                   a shell completion script

stack verbs (check, preview and refresh default to the stack dev; up and destroy act on a stack named on purpose):
  check    validate stacks/Pulumi.<stack>.yaml and print the plan; deploys nothing
  preview  check, then preview the stack with the policy pack (after a refresh: drift is shown); --diff names
           each step's changed keys and why
  up       check, then deploy the stack with the policy pack (the main job); what drifted is put back
  refresh  check, then refresh the stack's state from the engine
  destroy  remove everything the stack deployed (the off switch; works whatever the config says now); on a
           terminal it asks first unless --yes

  --json     one JSON document on stdout, nothing else there
  --verbose  the engine's own output and the full detail of a failure (stderr)
  exit codes: 0 done, 1 the engine failed or the policy pack refused, 2 bad input, 3 a tool is missing,
              130/143 cancelled (Ctrl-C once cancels and waits; twice kills)

task verbs, on the local Docker engine:
  run <stack> <template> [--file name=path] [--dir path] [--keep] [--out dir] [-- command...]
                                           launch one task in a fresh hardened container
  probe <stack> [template...]              prove every wall inside each template, declared vs observed
  escape <stack> [template...]             try the four escapes (env exfiltration, write outside the job
                                           folder, fork bomb, metadata address); each must be blocked
  serve <stack> [--pool N] [--listen a:p]  the launch service: a warm launcher on a unix socket (and loopback
                                           TCP for agents' keys); \`run\` goes through it while it answers
  off <stack> [--yes]                      remove every container, network, volume and job folder of the
                                           project (works whatever the config says now; asks on a terminal)
  run ... --agent name                     the agent the task is for, with its key in SANDBOX_AGENT_KEY
  agent-key <stack> <agent> [--revoke]     mint a key for an agent (printed once), or revoke its keys
  logs <stack> proxy|broker [--since t]    the egress proxy's decisions with their reasons, or the broker's calls
  config set <stack> <key> [--secret]      set a config key (a credential: --secret), the value from stdin or a
                                           prompt that does not echo it

the ledger (every run the task verbs make, charged and recorded; no engine needed):
  spend <stack>                            month to date: spent, left, by template and agent, the forecast
  audit <stack> [--since t] [--agent a]    each run: command, file hashes, exit, limits, egress, charge
  alerts <stack> [--since t]               budget 80/90/100 %, refused launches, escape signals
  ledger copy <stack> --to <url>           move the project's history into a shared ledger on PostgreSQL
  ledger reset <stack>                     start a new ledger on purpose (a ledger lost or replaced is refused)
  ledger local <stack> [--stop]            this checkout's own PostgreSQL for a shared ledger (a unix socket)

files, no stack:
  scan [--format text|json|sarif] [--config f] <file|folder|->...
           judge Kubernetes YAML, Compose files, pulumi preview --json / stack export and launch specs
           with the policy pack's rules (exit 0 pass, 1 a mandatory rule fails, 2 bad input)

other:
  test     run the test suite (type check, lint, tests)
  help     print this text`;
