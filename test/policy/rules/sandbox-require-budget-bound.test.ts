/**
 * sandbox-require-budget-bound (stack rule): the worst-case monthly spend stays within the cap, with the arithmetic.
 * The cap is a SandboxProject component's (its budget facts, recomputed) or the pack config's `monthlyCapUsd`. Task
 * slots = the admitted concurrency (at least one per task workload) × the largest task; every other container, and
 * every pod carrier (replicas × limits, DaemonSets × nodes) outside a namespace with a ResourceQuota, runs all month;
 * what has no limit cannot be bounded; facts of any other shape fail closed.
 */
import { describe, expect, it } from "vitest";
import { type BudgetFacts, budgetFacts, type ProjectInput, resolveProject } from "../../../components/model";
import { REDACTED_SECRET } from "../../../policy/sources/lenient";
import { scanJson, tempFiles } from "../../scan/helpers";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec } from "../fixtures";
import { DECLARED, noted, type StackFixture, UNKNOWN_WIRE, validateStack, violated } from "../harness";

const RULE = "sandbox-require-budget-bound";
type Obj = Record<string, unknown>;
const POD_PRICE = "(0.5 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h"; // the hardened pod: 500m, 512Mi = $2.19
const TASK_PRICE = "(1 vCPU × $0.004 + 1 GB × $0.002) × 730 h"; // 1 vCPU, 1 GiB = $4.38
const PROXY_TERM = 'proxy Container "egress": 1 × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $1.83';
const tasks = (n: number, usd: string) => `${n} task${n === 1 ? "" : "s"} × ${TASK_PRICE} = $${usd}`;

const mine = (fixtures: StackFixture[], config?: Obj) =>
  validateStack(fixtures, config === undefined ? {} : { [RULE]: config })
    .violations.filter((v) => v.policy === RULE)
    .map((v) => v.message);
const cap = (monthlyCapUsd: number, extra: Obj = {}) => ({ monthlyCapUsd, ...extra });
function container(name: string, extra: Obj = {}, role = "task"): StackFixture {
  const p = copy(safeContainer());
  p.labels = [
    { label: "sandbox.project", value: "demo" },
    { label: "sandbox.role", value: role },
  ];
  return { type: DOCKER, name, props: { ...p, memory: 1024, cpus: "1", ...extra } };
}
const QUOTA = "kubernetes:core/v1:ResourceQuota";
const PROXY = container("egress", { memory: 256, cpus: "0.5" }, "proxy");
/** A pod carrier whose pods carry no sandbox role: priced as running all month. */
function carrierOf(
  kind: string,
  specExtra: Obj = {},
  meta: Obj = {},
  pod: Obj = safePodSpec(),
): StackFixture {
  const props = carrier(kind).build(pod, { labels: { app: "web" } });
  props.metadata = { name: kind.toLowerCase(), ...meta };
  Object.assign(props.spec as Obj, specExtra);
  return { type: carrier(kind).type, name: kind.toLowerCase(), props };
}

const factsOf = (p: Partial<ProjectInput> = {}): BudgetFacts =>
  budgetFacts(
    resolveProject({
      name: "demo",
      budget: { monthlyCapUsd: 10 },
      templates: { t: { image: "x:1", resources: { vcpu: 1, memoryMb: 1024 } } },
      ...p,
    }),
  );
const component = (facts: unknown): StackFixture => ({
  type: "sandbox:docker:SandboxProject",
  name: "sbx",
  props: { budgetFacts: facts },
});

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job under a cap that holds them", () => {
    const stack: StackFixture[] = [{ type: DOCKER, name: "c", props: safeContainer() }];
    for (const kind of ["Pod", "Deployment", "Job"])
      stack.push({ type: carrier(kind).type, name: kind, props: carrier(kind).build(safePodSpec()) });
    expect(violated(validateStack(stack))).not.toContain(RULE);
    expect(violated(validateStack(stack, { [RULE]: cap(100) }))).not.toContain(RULE);
  });

  describe("the stack's cap (monthlyCapUsd)", () => {
    it("refuses task slots above the cap, and accepts the same at the cap", () => {
      const t = container("t");
      expect(mine([t], cap(10, { maxConcurrentTasks: 3 }))).toEqual([
        `worst case ${tasks(3, "13.14")} > cap $10.00`,
      ]);
      expect(mine([t], cap(13.14, { maxConcurrentTasks: 3 }))).toEqual([]);
    });

    it("takes a project's concurrency from `concurrency`, over maxConcurrentTasks", () => {
      const t = [container("t")];
      expect(mine(t, cap(10, { maxConcurrentTasks: 1, concurrency: { demo: 3 } }))).toEqual([
        `worst case ${tasks(3, "13.14")} > cap $10.00`,
      ]);
      expect(mine(t, cap(10, { maxConcurrentTasks: 3, concurrency: { demo: 2 } }))).toEqual([]);
    });

    it("prices at the configured rates and hours", () => {
      expect(mine([container("t")], cap(10, { usdPerVcpuHour: 0.02 }))).toEqual([
        "worst case 1 task × (1 vCPU × $0.02 + 1 GB × $0.002) × 730 h = $16.06 > cap $10.00",
      ]);
      expect(mine([container("t")], cap(4, { hoursPerMonth: 1000 }))).toEqual([
        "worst case 1 task × (1 vCPU × $0.004 + 1 GB × $0.002) × 1000 h = $6.00 > cap $4.00",
      ]);
    });

    it("adds what runs all month (a proxy) to the task slots", () => {
      expect(mine([container("t"), PROXY], cap(5))).toEqual([
        `worst case ${tasks(1, "4.38")} + ${PROXY_TERM}; total $6.21 > cap $5.00`,
      ]);
    });

    it.each([
      ["a Deployment's replicas", "Deployment", { replicas: 10 }, cap(3), 10, "21.90", "3.00"],
      ["a Job's parallelism", "Job", { parallelism: 10 }, cap(3), 10, "21.90", "3.00"],
      ["a DaemonSet on each node", "DaemonSet", {}, cap(5, { daemonSetNodes: 3 }), 3, "6.57", "5.00"],
    ])("prices %s as running all month", (_, kind, extra, config, n, usd, c) => {
      expect(mine([carrierOf(kind, extra)], config)).toEqual([
        `worst case ${kind} "${kind.toLowerCase()}": ${n} × ${POD_PRICE} = $${usd} > cap $${c}`,
      ]);
    });

    it("prices a Deployment a HorizontalPodAutoscaler scales at its maxReplicas; an unknown maximum is uncertain", () => {
      const hpa = (maxReplicas: unknown, name = "deployment"): StackFixture => ({
        type: "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
        name: "hpa",
        props: {
          metadata: { name: "hpa" },
          spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name }, maxReplicas },
        },
      });
      const d = carrierOf("Deployment", { replicas: 1 });
      expect(mine([d], cap(3))).toEqual([]);
      expect(mine([d, hpa(10)], cap(3))).toEqual([
        `worst case Deployment "deployment": 10 × ${POD_PRICE} = $21.90 > cap $3.00`,
      ]);
      // An autoscaler of another workload changes nothing.
      expect(mine([d, hpa(10, "other")], cap(3))).toEqual([]);
      expect(noted(validateStack([d, hpa(UNKNOWN_WIRE)], { [RULE]: cap(3) }))).toContain(RULE);
    });

    it("prices a namespace with a ResourceQuota at its quota, whatever its pods ask", () => {
      const hard = { "limits.cpu": "2", "limits.memory": "4Gi" };
      const quota = { type: QUOTA, name: "q", props: { metadata: { namespace: "sbx" }, spec: { hard } } };
      const many = carrierOf("Deployment", { replicas: 100 }, { namespace: "sbx" });
      expect(mine([quota, many], cap(11.68))).toEqual([]);
      expect(mine([quota, many], cap(5))).toEqual([
        'worst case ResourceQuota "q" (namespace sbx): 1 × (2 vCPU × $0.004 + 4 GB × $0.002) × 730 h = $11.68 > cap $5.00',
      ]);
    });

    const bare = { ...safePodSpec(), containers: [{ ...first(safePodSpec()), resources: {} }] };
    it.each([
      ["a container without a memory limit", container("t", { memory: undefined }), 'Container "t"'],
      ["a container with a zero limit", container("t", { memory: 0 }), 'Container "t"'],
      ["a container without a CPU limit", container("t", { cpus: undefined }), 'Container "t"'],
      ["a pod without limits", carrierOf("Pod", {}, {}, bare), 'Pod "pod"'],
    ])("refuses %s: nothing bounds its spend", (_, fixture, who) => {
      expect(mine([fixture], cap(1000))).toEqual([
        `${who} has no CPU or memory limit, so nothing bounds its spend under the cap`,
      ]);
    });

    it("prices one-shot probes as runs in the task slots, and a restarted probe as on all month", () => {
      const probe = (name: string, restart = "no") => container(name, { memory: 512, restart }, "probe");
      const two = cap(10, { maxConcurrentTasks: 2 });
      expect(mine([probe("p1"), probe("p2"), probe("p3")], two)).toEqual([]);
      expect(mine([probe("p1", "unless-stopped"), probe("p2"), probe("p3")], two)[0]).toContain(
        'probe Container "p1"',
      );
    });

    it("is silent with no cap at all, even for what has no limit", () => {
      expect(mine([container("t", { memory: undefined }), carrierOf("DaemonSet")])).toEqual([]);
    });
  });

  describe("a SandboxProject component's budget facts", () => {
    it("passes the facts the component writes, and what the project runs within them", () => {
      expect(mine([component(factsOf()), container("t")])).toEqual([]);
    });

    it("refuses what the project runs beyond its cap", () => {
      expect(mine([component(factsOf()), container("t"), PROXY])).toEqual([
        `project "demo": worst case ${tasks(2, "8.76")} + ${PROXY_TERM}; total $10.59 > cap $10.00`,
      ]);
    });

    const over = { maxConcurrentTasks: 3, worstCaseUsd: 13.14 };
    it.each([
      ["facts above the cap", over, `project "demo": worst case ${tasks(3, "13.14")} > cap $10.00`],
      ["facts that do not add up", { worstCaseUsd: 1 }, "do not add up: they declare a worst case of $1.00"],
      ["an agent cap above it", { agentCapsUsd: { ci: 12 } }, 'agent "ci" has a cap of $12.00 > the project'],
      [
        "facts of another shape",
        { name: "demo" },
        "do not match the facts this policy reads (budgetFacts.name",
      ],
      ["a fact sealed as a secret", { project: REDACTED_SECRET }, "it is a Pulumi secret, whose value the"],
    ])("refuses %s", (_, edit, text) => {
      const m = mine([component({ ...factsOf(), ...edit })]);
      expect(m).toHaveLength(1);
      expect(m[0]).toContain(text);
    });

    it("refuses a component without facts", () => {
      expect(mine([component(undefined)])).toEqual([expect.stringMatching(/budgetFacts = \(missing\)/)]);
    });

    it("judges a metered project's always-on part, and a plan against the stack's cap", () => {
      const egress = { web: { image: "x:1", egress: { mode: "proxy" as const, allow: ["pypi.org"] } } };
      const proxied = factsOf({ budget: { monthlyCapUsd: 1, enforce: "metered" }, templates: egress });
      expect(mine([component(proxied)])).toEqual([
        'project "demo": the always-on part 1 proxy × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $1.83 > cap $1.00, before any metered task',
      ]);
      expect(mine([component(factsOf())], cap(5))).toContainEqual(
        `project "demo": worst case ${tasks(2, "8.76")} > the stack's cap $5.00`,
      );
    });

    it("passes a metered project's 50 slots: the ledger admits each run under the cap", () => {
      const metered = factsOf({ budget: { monthlyCapUsd: 1, enforce: "metered", maxConcurrentTasks: 50 } });
      expect(mine([component(metered)])).toEqual([]);
    });
  });

  describe("values not known until the update", () => {
    it("notes an unknown limit when the known part fits, and refuses the known part above the cap", () => {
      const stack = [container("t", { memory: UNKNOWN_WIRE }), container("u")];
      const o = validateStack(stack, { [RULE]: cap(5) });
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
      expect(mine(stack, cap(1))).toEqual([`worst case ${tasks(1, "4.38")} > cap $1.00`]);
    });

    it("notes facts not known until the update", () => {
      const o = validateStack([component({ ...factsOf(), maxConcurrentTasks: UNKNOWN_WIRE })]);
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    });
  });

  describe("scan of a stack export", () => {
    const resource = (f: StackFixture) => ({
      urn: `urn:pulumi:dev::sandbox::${f.type}::${f.name}`,
      custom: true,
      type: f.type,
      inputs: f.props,
    });
    async function found(fixtures: StackFixture[], config?: Obj) {
      const state = JSON.stringify({ version: 3, deployment: { resources: fixtures.map(resource) } });
      // The fixtures' job folders live under the declared job root (sandbox-require-single-job-mount).
      const files = {
        "state.json": state,
        "c.json": JSON.stringify({ [RULE]: config ?? {}, ...DECLARED }),
      };
      const { code, report } = await scanJson(
        ["--config", "c.json", "state.json"],
        undefined,
        tempFiles(files),
      );
      expect(report.errors).toEqual([]);
      return {
        code,
        m: report.findings.filter((f) => f.ruleId === RULE && !f.unchecked).map((f) => f.message),
      };
    }

    it("refuses a project running beyond its facts' cap, and passes it within", async () => {
      expect(await found([component(factsOf()), container("t"), PROXY])).toEqual({
        code: 1,
        m: [`project "demo": worst case ${tasks(2, "8.76")} + ${PROXY_TERM}; total $10.59 > cap $10.00`],
      });
      expect(await found([component(factsOf()), container("t")])).toEqual({ code: 0, m: [] });
    });

    it("applies the config's stack cap, and fails closed on a component without facts", async () => {
      expect((await found([container("t")], cap(10, { maxConcurrentTasks: 3 }))).m).toEqual([
        `worst case ${tasks(3, "13.14")} > cap $10.00`,
      ]);
      expect((await found([component(undefined)])).m).toEqual([
        expect.stringMatching(/budgetFacts = \(missing\)/),
      ]);
    });
  });

  it("prices a sidecar (an init container with restartPolicy Always) with the pod, as the scheduler sizes it", () => {
    const pod = safePodSpec();
    pod.initContainers = [
      {
        name: "side",
        image: "x:1",
        restartPolicy: "Always",
        resources: { limits: { cpu: "64", memory: "256Gi" } },
      },
    ];
    expect(mine([carrierOf("Deployment")], cap(3))).toEqual([]);
    expect(mine([carrierOf("Deployment", {}, {}, pod)], cap(3)).join("\n")).toMatch(/64\.5 vCPU/);
    // A plain init container ends before the task starts: the pod is sized by the larger of the two phases.
    const plain = safePodSpec();
    plain.initContainers = [
      { name: "init", image: "x:1", resources: { limits: { cpu: "250m", memory: "64Mi" } } },
    ];
    expect(mine([carrierOf("Deployment", {}, {}, plain)], cap(3))).toEqual([]);
  });

  it("counts every copy a task carrier runs at once, and a controller labelled task as always on", () => {
    const task = (kind: string, specExtra: Obj): StackFixture => {
      const props = carrier(kind).build(safePodSpec(), {
        labels: { "sandbox.project": "demo", "sandbox.role": "task" },
      });
      props.metadata = { name: kind.toLowerCase() };
      Object.assign(props.spec as Obj, specExtra);
      return { type: carrier(kind).type, name: kind.toLowerCase(), props };
    };
    const config = cap(3, { maxConcurrentTasks: 1 });
    expect(mine([task("Job", {})], config)).toEqual([]);
    expect(mine([task("Job", { parallelism: 10 })], config).join("\n")).toMatch(/10 tasks/);
    expect(mine([task("Deployment", { replicas: 10 })], config).join("\n")).toMatch(/10 ×/);
  });
});
