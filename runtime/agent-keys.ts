/**
 * Who an agent is: whoever holds one of its keys. The operator mints a key for an agent (`sandbox agent-key`); the
 * ledger keeps only its SHA-256, and a launch that names an agent, or presents a key, is that agent only when the key
 * is one of the agent's and not revoked. Without a key a launch is the operator's own.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Ledger } from "./ledger";
import type { LedgerStore } from "./ledger/store";

/** The variable a caller presents its agent key in. */
export const AGENT_KEY_ENV = "SANDBOX_AGENT_KEY";

/** Every key starts so, which makes one found in a log or a file recognisable. */
const KEY_PREFIX = "sbx_agent_";

/** The ledger's record of a key: the agent and its hash, never the key. */
function keyHash(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Why a key or a claimed agent is refused; the message never holds the key. */
export class AgentKeyRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentKeyRefused";
  }
}

/** The agent keys of one project, kept in its ledger's store (opened and migrated by the ledger first). */
export class AgentKeys {
  constructor(
    private readonly store: LedgerStore,
    private readonly project: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Mints a new key for `agent` and returns it: the only time it is seen. Earlier keys stay valid. */
  async mint(agent: string): Promise<string> {
    const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
    await this.store.write((q) =>
      q.run("INSERT INTO agent_keys (key_hash, project, agent, made_at) VALUES (?, ?, ?, ?)", [
        keyHash(key),
        this.project,
        agent,
        this.clock(),
      ]),
    );
    return key;
  }

  /** Revokes every key of `agent`; returns how many were valid. */
  revoke(agent: string): Promise<number> {
    return this.store.write((q) =>
      q.run("UPDATE agent_keys SET revoked_at = ? WHERE project = ? AND agent = ? AND revoked_at IS NULL", [
        this.clock(),
        this.project,
        agent,
      ]),
    );
  }

  /** How many valid keys each agent has. */
  async counts(): Promise<Record<string, number>> {
    const rows = await this.store.all(
      "SELECT agent, COUNT(*) AS n FROM agent_keys WHERE project = ? AND revoked_at IS NULL GROUP BY agent ORDER BY agent",
      [this.project],
    );
    return Object.fromEntries(rows.map((r) => [String(r.agent), Number(r.n)]));
  }

  /** The agent whose valid key `key` is, or undefined. */
  async agentOf(key: string): Promise<string | undefined> {
    if (!key.startsWith(KEY_PREFIX)) return undefined;
    const row = await this.store.get(
      "SELECT agent FROM agent_keys WHERE key_hash = ? AND project = ? AND revoked_at IS NULL",
      [keyHash(key), this.project],
    );
    return row?.agent === undefined ? undefined : String(row.agent);
  }

  /**
   * Who a launch is for: the agent of the presented key (which must be the claimed agent when one is named), or the
   * operator (undefined) when neither a key nor an agent is given. A claimed agent without its key, a key that is
   * not valid, or a key of another agent is refused.
   */
  async identify(claimed: string | undefined, key: string | undefined): Promise<string | undefined> {
    const presented = key === undefined || key === "" ? undefined : key;
    if (presented === undefined) {
      if (claimed === undefined) return undefined;
      throw new AgentKeyRefused(
        `agent "${claimed}" is claimed without its key: present it in ${AGENT_KEY_ENV} (the operator mints one with \`sandbox agent-key <stack> ${claimed}\`)`,
      );
    }
    const holder = await this.agentOf(presented);
    if (holder === undefined) {
      throw new AgentKeyRefused(
        `the key in ${AGENT_KEY_ENV} is not a valid agent key of project "${this.project}" (unknown or revoked)`,
      );
    }
    if (claimed !== undefined && claimed !== holder) {
      throw new AgentKeyRefused(
        `agent "${claimed}" is claimed with a key of another agent; a key names its own agent`,
      );
    }
    return holder;
  }
}

/** Who a run is for, from the claimed agent and the key in the caller's environment (see {@link AgentKeys.identify}). */
export function identifyAgent(
  ledger: Ledger,
  project: string,
  claimed: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  return new AgentKeys(ledger.store, project).identify(claimed, env[AGENT_KEY_ENV]);
}
