/**
 * Agent keys on a real ledger file: an agent is whoever holds one of its keys. The ledger keeps only the keys'
 * hashes; a claimed agent without its key, an unknown or revoked key, and another agent's key are refused.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_KEY_ENV, AgentKeyRefused, AgentKeys } from "../../runtime/agent-keys";
import type { Meter } from "../../runtime/ledger";
import { Ledger } from "../../runtime/ledger";

const meter: Meter = {
  project: "keys-test",
  enforce: "metered",
  capUsd: 1,
  fixedUsd: 0,
  rates: { usdPerVcpuHour: 1, usdPerGbHour: 0 },
  concurrency: 2,
  agents: { alice: {}, bob: {} },
  templates: ["default"],
  enabled: true,
};

let open: { close(): unknown }[] = [];
/** The temporary folders of the ledgers: removed after each test, so that no run leaves one behind. */
let folders: string[] = [];
afterEach(async () => {
  for (const o of open) await o.close();
  open = [];
  for (const f of folders) rmSync(f, { recursive: true, force: true });
  folders = [];
});

function keysAt(project = meter.project): { keys: AgentKeys; file: string; ledger: Ledger } {
  const file = join(mkdtempSync(join(tmpdir(), "agent-keys-")), "p.sqlite");
  folders.push(dirname(file));
  const ledger = Ledger.open(file, { ...meter, project });
  const keys = new AgentKeys(ledger.store, project);
  open.push(ledger);
  return { keys, file, ledger };
}

const refusal = async (fn: () => Promise<unknown>) => {
  try {
    await fn();
  } catch (e) {
    if (e instanceof AgentKeyRefused) return e.message;
    throw e;
  }
  return "admitted";
};

describe("agent keys", () => {
  it("makes the key's holder the agent, with or without naming it; no key and no name is the operator", async () => {
    const { keys } = keysAt();
    const key = await keys.mint("alice");
    expect(key).toMatch(/^sbx_agent_[A-Za-z0-9_-]{43}$/);
    expect(await keys.identify(undefined, key)).toBe("alice");
    expect(await keys.identify("alice", key)).toBe("alice");
    expect(await keys.identify(undefined, undefined)).toBeUndefined();
    expect(await keys.identify(undefined, "")).toBeUndefined();
  });

  it("refuses a claimed agent without a key, an unknown key, another agent's key and a revoked key", async () => {
    const { keys } = keysAt();
    const alice = await keys.mint("alice");
    const bob = await keys.mint("bob");
    expect(await refusal(() => keys.identify("alice", undefined))).toBe(
      `agent "alice" is claimed without its key: present it in ${AGENT_KEY_ENV} (the operator mints one with \`sandbox agent-key <stack> alice\`)`,
    );
    expect(await refusal(() => keys.identify("alice", `${alice.slice(0, -1)}x`))).toMatch(
      /not a valid agent key/,
    );
    expect(await refusal(() => keys.identify("alice", "alice"))).toMatch(/not a valid agent key/);
    expect(await refusal(() => keys.identify("alice", bob))).toBe(
      'agent "alice" is claimed with a key of another agent; a key names its own agent',
    );
    expect(await keys.counts()).toEqual({ alice: 1, bob: 1 });
    expect(await keys.revoke("alice")).toBe(1);
    expect(await refusal(() => keys.identify(undefined, alice))).toMatch(/unknown or revoked/);
    expect(await keys.identify(undefined, bob)).toBe("bob");
    expect(await keys.counts()).toEqual({ bob: 1 });
  });

  it("keeps a second key valid beside the first, and only hashes in the ledger file", async () => {
    const { keys, file } = keysAt();
    const first = await keys.mint("alice");
    const second = await keys.mint("alice");
    expect(second).not.toBe(first);
    expect(await keys.identify(undefined, first)).toBe("alice");
    expect(await keys.identify(undefined, second)).toBe("alice");
    const bytes = readFileSync(file).toString("latin1");
    for (const k of [first, second]) expect(bytes).not.toContain(k.slice("sbx_agent_".length));
  });

  it("never takes another project's key in the same ledger file", async () => {
    const { keys, ledger } = keysAt("one");
    const key = await keys.mint("alice");
    const other = new AgentKeys(ledger.store, "two");
    expect(await refusal(() => other.identify(undefined, key))).toMatch(
      /not a valid agent key of project "two"/,
    );
  });
});
