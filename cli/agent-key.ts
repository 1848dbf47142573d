/**
 * `sandbox agent-key <stack> <agent> [--revoke]`: the operator mints a key for one of the stack's agents (printed once;
 * the ledger keeps its SHA-256), or revokes every key of the agent. A run for an agent needs one of its keys
 * (runtime/agent-keys.ts).
 */
import { type ResolvedProject, SpecError } from "../components/model";
import { AgentKeys } from "../runtime/agent-keys";
import type { Ledger } from "../runtime/ledger";
import { isLedgerProblem } from "../runtime/ledger/errors";
import { LedgerGone } from "../runtime/ledger/witness";
import { openProjectLedger } from "./ledger";
import { type Io, Reporter } from "./output";

const USAGE = "usage: sandbox agent-key <stack> <agent> [--revoke] (`sandbox agent-key --help`)";

export async function runAgentKeyCommand(
  args: readonly string[],
  c: {
    readonly io: Io;
    readonly json: boolean;
    /** Reads a stack's config; throws SpecError. */
    readonly load: (stack: string) => ResolvedProject;
    /** The ledger file of a project. */
    readonly file: (stack: string, project: ResolvedProject) => string;
  },
): Promise<number> {
  const rep = new Reporter(c.io, c.json, false);
  const revoke = args.includes("--revoke");
  const positional = args.filter((a) => a !== "--revoke");
  const [stack, agent, ...extra] = positional;
  const fail = (message: string, exitCode = 2, kind = "bad-input") =>
    rep.failure({ verb: "agent-key", stack: stack ?? "", ok: false, exitCode, error: { kind, message } });
  const unknown = positional.find((a) => a.startsWith("-"));
  if (unknown !== undefined) return fail(`agent-key: unknown option ${JSON.stringify(unknown)}; ${USAGE}`);
  if (stack === undefined || agent === undefined || extra.length > 0) return fail(USAGE);
  let project: ResolvedProject;
  try {
    project = c.load(stack);
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    return fail(e.message);
  }
  const agents = Object.keys(project.spec.agents).sort();
  if (!agents.includes(agent)) {
    return fail(
      `agent-key: agent ${JSON.stringify(agent)} is not one of stack ${stack}'s agents (${agents.join(", ") || "it names none; declare them under sandbox:agents"})`,
    );
  }
  const file = c.file(stack, project);
  let ledger: Ledger;
  try {
    ledger = await openProjectLedger(file, project, {}, c.io.err);
  } catch (e) {
    if (!(e instanceof LedgerGone) && !isLedgerProblem(e)) throw e;
    return fail(e.message, 1, "ledger");
  }
  const keys = new AgentKeys(ledger.store, project.spec.name);
  try {
    const head = { verb: "agent-key", stack, ok: true, exitCode: 0, project: project.spec.name, agent };
    if (revoke) {
      const revoked = await keys.revoke(agent);
      return rep.result({ ...head, revoked }, `agent ${agent}: ${revoked} key(s) revoked`);
    }
    const key = await keys.mint(agent);
    rep.note(`agent ${agent}: a new key (shown once; give it to the agent as SANDBOX_AGENT_KEY)`);
    return rep.result({ ...head, key }, key);
  } catch (e) {
    if (!isLedgerProblem(e)) throw e;
    return fail(e.message, 1, "ledger");
  } finally {
    await ledger.close();
  }
}
