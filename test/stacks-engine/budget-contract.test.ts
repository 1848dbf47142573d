// The budget contract through the real Pulumi engine: a SandboxProject registers its budget facts as `budgetFacts`
// (the writer, `budgetFacts()`), the engine hands them to the policy pack among the component's outputs, and
// `sandbox-require-budget-bound` reads them back (the reader). Preview only: nothing is created. The stacks live in a
// temporary backend and work folder, and are removed at the end.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { EngineEvent, PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxProject } from "../../components/docker";
import { TEST_IMAGE } from "../helpers/docker";
import { type DockerEngineWorkspace, dockerEngineWorkspace, POLICY } from "../helpers/dockerEngine";

const BUDGET = "sandbox-require-budget-bound";
const project = `budget-${Math.random().toString(36).slice(2, 7)}`;

let ws: DockerEngineWorkspace;
let stack: Stack | undefined;
let older: Stack | undefined;

beforeAll(async () => {
  ws = await dockerEngineWorkspace();
});

afterAll(async () => {
  for (const s of [stack, older]) if (s !== undefined) await s.workspace.removeStack(s.name, { force: true });
  ws?.cleanup();
});

// No concurrency is written: the component admits the two tasks of 1 vCPU and 0.5 GB that fit the $10 cap ($7.30),
// and its facts carry that admitted figure.
const program: PulumiFn = async () => {
  new SandboxProject(project, {
    jobRoot: join(ws.dir, "jobs"),
    budget: { monthlyCapUsd: 10 },
    templates: { default: { image: TEST_IMAGE, timeoutSeconds: 120 } },
  });
};

// What a component of an earlier version registered: its facts as top-level inputs, the raw concurrency inside the
// budget, nothing among its outputs.
class OlderSandboxProject extends pulumi.ComponentResource {
  constructor(name: string) {
    super("sandbox:docker:SandboxProject", name, {
      project: name,
      backend: "docker",
      enabled: true,
      budget: { monthlyCapUsd: 10, maxConcurrentTasks: 2 },
      maxConcurrentTasks: 2,
      worstCaseUsd: 7.3,
    });
    this.registerOutputs({ enabled: true });
  }
}
const olderProgram: PulumiFn = async () => {
  new OlderSandboxProject(project);
};

interface BudgetEvent {
  readonly message: string;
  readonly level: string;
  readonly urn: string | undefined;
}

/** Previews `stack` with the policy pack, returning whether it succeeded and what the budget rule said. */
async function preview(s: Stack, configFile?: string): Promise<{ ok: boolean; events: BudgetEvent[] }> {
  const events: BudgetEvent[] = [];
  const onEvent = (e: EngineEvent) => {
    const p = e.policyEvent;
    if (p?.policyName !== BUDGET) return;
    events.push({ message: p.message, level: p.enforcementLevel, urn: p.resourceUrn });
  };
  try {
    await s.preview({
      policyPacks: POLICY,
      ...(configFile === undefined ? {} : { policyPackConfigs: [configFile] }),
      onEvent,
      onOutput: (t) => process.stdout.write(t),
    });
    return { ok: true, events };
  } catch {
    return { ok: false, events };
  }
}

describe("the budget facts, written by the component and read by the stack rule through the engine", () => {
  it("pass for a project that fits its cap", async () => {
    stack = await ws.newStack("budget", program);
    const r = await preview(stack);
    expect(r.events).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it("fail a stack whose registered facts exceed the pack's configured cap, with the admitted arithmetic", async () => {
    if (stack === undefined) throw new Error("the first test creates the stack");
    const config = join(ws.dir, "budget-cap.json");
    writeFileSync(config, JSON.stringify({ [BUDGET]: { monthlyCapUsd: 5 } }));
    const r = await preview(stack, config);
    expect(r.ok).toBe(false);
    // The project's plan exceeds $5, and so does what the stack runs: its probe is one run in the 2 admitted slots.
    expect(r.events).toEqual([
      {
        message: expect.stringContaining(
          `project "${project}": worst case 2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30 > the stack's cap $5.00`,
        ),
        level: "mandatory",
        urn: expect.stringMatching(new RegExp(`::sandbox:docker:SandboxProject::${project}$`)),
      },
      {
        message: expect.stringContaining(
          "worst case 2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30 > cap $5.00",
        ),
        level: "mandatory",
        urn: expect.any(String),
      },
    ]);
  });

  it("fail closed on facts of another shape (an earlier version's component)", async () => {
    older = await ws.newStack("budget-older", olderProgram);
    const r = await preview(older);
    expect(r.ok).toBe(false);
    expect(r.events).toEqual([
      {
        message: expect.stringContaining(
          `the budget facts of SandboxProject "${project}" do not match the facts this policy reads (budgetFacts = (missing)`,
        ),
        level: "mandatory",
        urn: expect.stringMatching(new RegExp(`::sandbox:docker:SandboxProject::${project}$`)),
      },
    ]);
  });
});
