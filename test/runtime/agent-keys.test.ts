import { afterEach, describe, expect, it } from "vitest";
import { AGENT_KEY_ENV } from "../../runtime/agent-keys";
import { projectLeftovers } from "../../runtime/offSwitch";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const stack = frontStackOnEngine(
  "ak",
  "ak",
  oneTemplate({ more: ["  sandbox:agents:", "    ci:", "      templates: [default]", "    other: {}"] }),
);
const { name, front } = stack;

afterEach(() => {
  delete process.env[AGENT_KEY_ENV];
});

/** The agent of each run in the audit, newest first. */
async function auditedAgents(): Promise<(string | null)[]> {
  const r = await front("audit", "ak", "--json");
  return (JSON.parse(r.out) as { runs: { agent: string | null }[] }).runs.map((x) => x.agent);
}

describe("agent keys through the front", () => {
  it("refuses a claimed agent without its key, and creates nothing", async () => {
    const r = await front("run", "ak", "default", "--agent", "ci", "--", "echo", "hi");
    // A refused launch: exit 2, like the policy's refusals.
    expect(r.code).toBe(2);
    expect(r.err).toContain(`agent "ci" is claimed without its key: present it in ${AGENT_KEY_ENV}`);
    expect(r.out).toBe("");
    expect(await projectLeftovers(stack.docker(), name)).toEqual([]);
  });

  it("runs as the key's agent, named or not, and refuses the key for another agent and once revoked", async () => {
    const minted = await front("agent-key", "ak", "ci");
    expect(minted.code, minted.err).toBe(0);
    const key = minted.out.trim();
    expect(key).toMatch(/^sbx_agent_/);
    process.env[AGENT_KEY_ENV] = key;

    const named = await front("run", "ak", "default", "--agent", "ci", "--", "echo", "named");
    expect(named.code, named.err).toBe(0);
    expect(named.out).toBe("named\n");
    const unnamed = await front("run", "ak", "default", "--", "echo", "unnamed");
    expect(unnamed.code, unnamed.err).toBe(0);
    expect((await auditedAgents()).slice(0, 2)).toEqual(["ci", "ci"]);

    const crossed = await front("run", "ak", "default", "--agent", "other", "--", "echo", "x");
    expect(crossed.code).toBe(2);
    expect(crossed.err).toContain('agent "other" is claimed with a key of another agent');

    const revoked = await front("agent-key", "ak", "ci", "--revoke");
    expect(revoked.code, revoked.err).toBe(0);
    expect(revoked.out).toBe("agent ci: 1 key(s) revoked\n");
    const after = await front("run", "ak", "default", "--", "echo", "x");
    expect(after.code).toBe(2);
    expect(after.err).toMatch(/not a valid agent key of project .* \(unknown or revoked\)/);
    expect(after.err).not.toContain(key);
    expect(await projectLeftovers(stack.docker(), name)).toEqual([]);
  }, 120_000);

  it("runs the operator's own task and probe with no key and no agent", async () => {
    const r = await front("run", "ak", "default", "--", "echo", "operator");
    expect(r.code, r.err).toBe(0);
    expect((await auditedAgents())[0]).toBeNull();
    const probe = await front("probe", "ak", "default", "--json");
    expect(probe.code, probe.err).toBe(0);
  }, 120_000);

  it("refuses a key for an agent the stack does not name", async () => {
    const r = await front("agent-key", "ak", "mallory");
    expect(r.code).toBe(2);
    expect(r.err).toContain('agent-key: agent "mallory" is not one of stack ak\'s agents (ci, other)');
  });
});
