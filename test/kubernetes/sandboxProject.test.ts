import { beforeAll, describe, expect, it } from "vitest";
import { PSA_VERSION } from "../../components/kubernetes/namespace";
import { SandboxProject } from "../../components/kubernetes/sandboxProject";
import { BudgetFactsSchema, budgetFacts, SpecError } from "../../components/model";
import { one, outputValue, type Registered, recordingMocks, registeredOutputs } from "../helpers/pulumiMocks";
import { validate, validateStack } from "../policy/harness";

const NS = "kubernetes:core/v1:Namespace";
const QUOTA = "kubernetes:core/v1:ResourceQuota";
const LIMITS = "kubernetes:core/v1:LimitRange";
const NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
const SA = "kubernetes:core/v1:ServiceAccount";
const PODTEMPLATE = "kubernetes:core/v1:PodTemplate";
const JOB = "kubernetes:batch/v1:Job";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const SERVICE = "kubernetes:core/v1:Service";
const CONFIGMAP = "kubernetes:core/v1:ConfigMap";
const RUNTIMECLASS = "kubernetes:node.k8s.io/v1:RuntimeClass";

let registered: Registered[] = [];
let project: SandboxProject;

beforeAll(async () => {
  const mocks = await recordingMocks({ stack: "staging" });
  project = new SandboxProject("team", {
    budget: { monthlyCapUsd: 300, maxConcurrentTasks: 20 },
    templates: {
      default: {
        image: "runner:1",
        resources: { vcpu: 2, memoryMb: 4096, pids: 256, tmpfsMb: 256, diskMb: 4096 },
      },
      web: {
        image: "runner:1",
        capDrop: "seed-six",
        runtime: "runsc",
        egress: { mode: "proxy", allow: ["pypi.org"] },
        resources: { vcpu: 1, memoryMb: 2048 },
      },
    },
  });
  await outputValue(project.probeJobs);
  registered = await mocks.settle();
});

describe("SandboxProject on Kubernetes", () => {
  it("registers the namespace, quota, limits, policies, service account, one PodTemplate and probe Job per template", () => {
    expect(registered.map((r) => `${r.type}/${r.name}`).sort()).toEqual(
      [
        "sandbox:kubernetes:SandboxProject/team",
        `${NS}/team-ns`,
        `${QUOTA}/team-quota`,
        `${LIMITS}/team-limits`,
        `${NETPOL}/team-default-deny`,
        `${NETPOL}/team-web-egress-proxy`,
        `${NETPOL}/team-proxy-policy`,
        `${SA}/team-task-sa`,
        `${SA}/team-proxy-sa`,
        `${CONFIGMAP}/team-proxy-config`,
        `${SERVICE}/team-proxy`,
        `${DEPLOYMENT}/team-proxy`,
        `${PODTEMPLATE}/team-default`,
        `${PODTEMPLATE}/team-web`,
        `${JOB}/team-default-probe`,
        `${JOB}/team-web-probe`,
        `${RUNTIMECLASS}/team-runtime-runsc`,
      ].sort(),
    );
    for (const r of registered.filter((x) => x.custom)) {
      expect(r.urn).toContain("sandbox:kubernetes:SandboxProject$");
    }
  });

  it("labels the namespace for Pod Security Admission restricted, pinned, and never uses default", () => {
    expect(one(registered, NS, "team-ns").inputs.metadata).toEqual({
      name: "team",
      labels: {
        "sandbox.managed-by": "sandbox-projects",
        "sandbox.project": "team",
        "sandbox.role": "network",
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": PSA_VERSION,
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": PSA_VERSION,
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": PSA_VERSION,
      },
    });
  });

  it("derives the quota from the budget: 20 tasks of the largest template and their holders, plus the always-on proxy pod and the two kept probe Jobs", () => {
    // 20 × (2 vCPU, 4096 Mi, 4096 Mi) + 20 holders × (0.1 vCPU, 32 Mi, 64 Mi) + the proxy (0.5 vCPU, 256 Mi, 64 Mi).
    expect((one(registered, QUOTA, "team-quota").inputs.spec as { hard: unknown }).hard).toEqual({
      "limits.cpu": "42500m",
      "limits.memory": "82816Mi",
      "limits.ephemeral-storage": "83264Mi",
      "requests.cpu": "42500m",
      "requests.memory": "82816Mi",
      "requests.ephemeral-storage": "83264Mi",
      pods: "21",
      "count/pods": "23",
      // The two templates' probe Jobs are kept for their logs, with their finished pods: they never take a task's slot.
      "count/jobs.batch": "22",
    });
  });

  it("reports the quota's arithmetic as an output", async () => {
    const quota = await outputValue(project.quota);
    expect(quota.arithmetic).toBe(
      "quota 20 tasks × (2 vCPU × $0.004 + 4 GB × $0.002) × 730 h = $233.60: limits.cpu 40, limits.memory 81920Mi ≤ cap $300.00",
    );
    expect(quota.worstCaseUsd).toBeCloseTo(233.6, 8);
  });

  it("gives a pod without limits the template defaults and rejects one above the largest template", () => {
    expect(one(registered, LIMITS, "team-limits").inputs.spec).toEqual({
      limits: [
        {
          type: "Container",
          default: { cpu: "1000m", memory: "512Mi", "ephemeral-storage": "1024Mi" },
          defaultRequest: { cpu: "1000m", memory: "512Mi", "ephemeral-storage": "1024Mi" },
          max: { cpu: "2000m", memory: "4096Mi", "ephemeral-storage": "4096Mi" },
        },
        // A task pod: the largest template's container and its holder (0.1 vCPU, 32 Mi, 64 Mi).
        { type: "Pod", max: { cpu: "2100m", memory: "4128Mi", "ephemeral-storage": "4160Mi" } },
      ],
    });
  });

  it("runs the proxy as a hardened one-replica Deployment behind a Service, configured from a ConfigMap", () => {
    const dep = one(registered, DEPLOYMENT, "team-proxy").inputs as {
      metadata: { name: string; namespace: string };
      spec: {
        replicas: number;
        template: {
          metadata: { labels: Record<string, string>; annotations: Record<string, string> };
          spec: Record<string, unknown> & {
            containers: {
              image: string;
              securityContext: Record<string, unknown>;
              resources: unknown;
              volumeMounts: unknown;
            }[];
          };
        };
      };
    };
    expect(dep.metadata).toMatchObject({ name: "team-proxy", namespace: "team" });
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.template.metadata.labels).toMatchObject({
      "sandbox.role": "proxy",
      "sandbox.project": "team",
    });
    expect(dep.spec.template.spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 13,
        runAsGroup: 13,
        seccompProfile: { type: "RuntimeDefault" },
      },
    });
    const c = dep.spec.template.spec.containers[0];
    expect(c?.image).toBe("sandbox-proxy:1");
    expect(c?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(c?.resources).toEqual({
      requests: { cpu: "500m", memory: "256Mi", "ephemeral-storage": "64Mi" },
      limits: { cpu: "500m", memory: "256Mi", "ephemeral-storage": "64Mi" },
    });
    expect(one(registered, SERVICE, "team-proxy").inputs.spec).toEqual({
      type: "ClusterIP",
      selector: { "sandbox.project": "team", "sandbox.role": "proxy" },
      ports: [{ name: "t-3128", protocol: "TCP", port: 3128, targetPort: 3128 }],
    });
    const conf = (one(registered, CONFIGMAP, "team-proxy-config").inputs.data as Record<string, string>)[
      "squid.conf"
    ];
    expect(conf).toContain("http_port 3128 name=t_web");
    expect(conf).toContain("acl allow_web dstdomain -n pypi.org");
    expect(conf).toContain("cache deny all");
  });

  it("lets the proxy take in only proxy-mode pods, and send out only DNS and the outside minus the refused ranges", () => {
    const spec = one(registered, NETPOL, "team-proxy-policy").inputs.spec as {
      podSelector: unknown;
      ingress: unknown;
      egress: { to: { ipBlock?: { cidr: string; except: string[] } }[]; ports: unknown }[];
    };
    expect(spec.podSelector).toEqual({ matchLabels: { "sandbox.project": "team", "sandbox.role": "proxy" } });
    expect(spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { "sandbox.egress": "proxy" } } }],
        ports: [{ protocol: "TCP", port: 3128 }],
      },
    ]);
    const blocks = spec.egress[1]?.to.map((t) => t.ipBlock);
    expect(blocks?.[0]?.except).toEqual(
      expect.arrayContaining([
        "10.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "127.0.0.0/8",
      ]),
    );
    expect(blocks?.[1]?.except).toEqual(["::1/128", "fe80::/10", "fc00::/7"]);
    expect(spec.egress[1]?.ports).toEqual([
      { protocol: "TCP", port: 80 },
      { protocol: "TCP", port: 443 },
    ]);
  });

  it("denies all ingress and egress by default, and lets proxy-mode pods reach only the proxy's port", () => {
    expect(one(registered, NETPOL, "team-default-deny").inputs.spec).toEqual({
      podSelector: {},
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress: [],
    });
    expect(one(registered, NETPOL, "team-web-egress-proxy").inputs.spec).toEqual({
      podSelector: { matchLabels: { "sandbox.egress": "proxy", "sandbox.template": "web" } },
      policyTypes: ["Egress"],
      egress: [
        {
          to: [{ podSelector: { matchLabels: { "sandbox.role": "proxy" } } }],
          ports: [{ protocol: "TCP", port: 3128 }],
        },
      ],
    });
  });

  it("gives tasks a service account without a token", () => {
    expect(one(registered, SA, "team-task-sa").inputs).toMatchObject({
      metadata: { name: "team-task", namespace: "team" },
      automountServiceAccountToken: false,
    });
  });

  it("stores each template as a PodTemplate with the hardened pod spec", () => {
    const pt = one(registered, PODTEMPLATE, "team-default").inputs as {
      metadata: { name: string; namespace: string };
      template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } };
    };
    expect(pt.metadata).toMatchObject({ name: "team-default", namespace: "team" });
    const spec = pt.template.spec;
    expect(spec).toMatchObject({
      restartPolicy: "Never",
      serviceAccountName: "team-task",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        fsGroup: 1000,
        seccompProfile: { type: "RuntimeDefault" },
      },
      volumes: [
        { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "256Mi" } },
        { name: "job", emptyDir: { sizeLimit: "4096Mi" } },
        { name: "streams", emptyDir: {} },
      ],
    });
    expect(spec.runtimeClassName).toBeUndefined();
    // The task, and the holder that keeps the pod for its stderr and job folder to be read (test/kubernetes/walls).
    expect(spec.containers.map((c) => c.name)).toEqual(["results", "task"]);
    expect(spec.containers[1]).toEqual({
      name: "task",
      image: "runner:1",
      command: [
        "sh",
        "-c",
        'exec 2>/run/sandbox/stderr; timeout -s KILL 600 "$@" & wait $!',
        "sh",
        "sh",
        "/job/run.sh",
      ],
      workingDir: "/job",
      env: [],
      securityContext: {
        allowPrivilegeEscalation: false,
        privileged: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        capabilities: { drop: ["ALL"] },
        seccompProfile: { type: "RuntimeDefault" },
      },
      resources: {
        requests: { cpu: "2000m", memory: "4096Mi", "ephemeral-storage": "4096Mi" },
        limits: { cpu: "2000m", memory: "4096Mi", "ephemeral-storage": "4096Mi" },
      },
      volumeMounts: [
        { name: "tmp", mountPath: "/tmp" },
        { name: "job", mountPath: "/job" },
        { name: "streams", mountPath: "/run/sandbox/stderr", subPath: "stderr" },
      ],
    });
  });

  it("asks for gVisor's RuntimeClass, the seed-six drop set and the proxy label where the template does", () => {
    const pt = one(registered, PODTEMPLATE, "team-web").inputs as {
      template: {
        metadata: { labels: Record<string, string> };
        spec: {
          runtimeClassName?: string;
          containers: { name: string; securityContext: { capabilities: unknown }; env: unknown }[];
        };
      };
    };
    const task = pt.template.spec.containers.find((c) => c.name === "task");
    expect(pt.template.spec.runtimeClassName).toBe("gvisor");
    expect(task?.securityContext.capabilities).toEqual({
      drop: ["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"],
    });
    expect(pt.template.metadata.labels["sandbox.egress"]).toBe("proxy");
    // No DNS for tasks: the proxy is named by its Service's cluster address, which kubelet sets (service links).
    expect(task?.env).toContainEqual({
      name: "HTTPS_PROXY",
      value: "http://$(TEAM_PROXY_SERVICE_HOST):3128",
    });
    expect((pt.template.spec as { enableServiceLinks?: boolean }).enableServiceLinks).toBe(true);
  });

  it("creates the gvisor RuntimeClass its runsc pods name (handler runsc), cluster-wide with the project's labels", () => {
    const rc = one(registered, RUNTIMECLASS, "team-runtime-runsc").inputs as {
      metadata: { name: string; namespace?: string; labels: Record<string, string> };
      handler: string;
    };
    expect(rc.metadata.name).toBe("gvisor");
    expect(rc.metadata.namespace).toBeUndefined();
    expect(rc.metadata.labels).toEqual({
      "sandbox.managed-by": "sandbox-projects",
      "sandbox.project": "team",
      "sandbox.role": "runtime",
    });
    expect(rc.handler).toBe("runsc");
  });

  it("runs a probe Job per template: one shot, never retried, with a deadline and a TTL", () => {
    const job = one(registered, JOB, "team-default-probe").inputs as {
      metadata: { name: string; annotations: Record<string, string>; labels: Record<string, string> };
      spec: Record<string, unknown> & { template: { spec: { containers: { command: string[] }[] } } };
    };
    expect(job.metadata.name).toBe("team-default-probe");
    expect(job.metadata.labels["sandbox.role"]).toBe("probe");
    expect(job.metadata.annotations).toEqual({ "pulumi.com/skipAwait": "true" });
    expect(job.spec).toMatchObject({
      backoffLimit: 0,
      parallelism: 1,
      completions: 1,
      activeDeadlineSeconds: 90,
      ttlSecondsAfterFinished: 300,
    });
    expect(job.spec.template.spec.containers[0]?.command.at(-1)).toContain("/proc/self/status");
  });

  it("registers the budget facts a stack policy needs among its inputs: the plan's, proxy included", () => {
    const { inputs } = one(registered, "sandbox:kubernetes:SandboxProject", "team");
    expect(inputs).toEqual({ budgetFacts: budgetFacts(project.resolved) });
    const c = BudgetFactsSchema.parse(inputs.budgetFacts);
    expect(c).toMatchObject({
      project: "team",
      backend: "kubernetes",
      maxConcurrentTasks: 20,
      slot: { vcpu: 2, memoryMb: 4096 },
      fixed: { label: "1 proxy", size: { vcpu: 0.5, memoryMb: 256 } },
    });
    expect(c.worstCaseUsd).toBeCloseTo(233.6 + 1.825, 8);
  });

  it("registers its outputs", () => {
    const urn = registered.find((r) => r.type === "sandbox:kubernetes:SandboxProject")?.urn ?? "";
    const outputs = registeredOutputs(urn);
    expect(Object.keys(outputs ?? {}).sort()).toEqual([
      "budget",
      "budgetFacts",
      "enabled",
      "namespaceName",
      "probeJobs",
      "proxy",
      "quota",
      "templates",
    ]);
    expect(outputs?.budgetFacts).toEqual(budgetFacts(project.resolved));
  });
});

describe("Kubernetes refusals and the hard stop", () => {
  it("sets the quota to zero when disabled, keeps everything else, and runs no probe", async () => {
    const mocks = await recordingMocks();
    const off = new SandboxProject("off", {
      enabled: false,
      budget: { monthlyCapUsd: 300 },
      templates: { default: { image: "runner:1" } },
    });
    await outputValue(off.quota);
    const regs = await mocks.settle();
    const hard = (one(regs, QUOTA, "off-quota").inputs.spec as { hard: Record<string, string> }).hard;
    expect(Object.values(hard).every((v) => /^0(m|Mi)?$/.test(v))).toBe(true);
    expect(hard["count/pods"]).toBe("0");
    expect(regs.filter((r) => r.type === JOB)).toEqual([]);
    expect(regs.filter((r) => r.type === PODTEMPLATE)).toHaveLength(1);
    expect((await outputValue(off.quota)).arithmetic).toBe(
      "quota 0 (the project is disabled or the cap admits no task) = $0.00 ≤ cap $300.00",
    );
  });

  it("refuses a cap that admits zero tasks, with the arithmetic, and registers nothing", async () => {
    const mocks = await recordingMocks();
    expect(
      () =>
        new SandboxProject("broke", {
          budget: { monthlyCapUsd: 5 },
          templates: { default: { image: "runner:1", resources: { vcpu: 2, memoryMb: 4096 } } },
        }),
    ).toThrow(
      'budget.monthlyCapUsd = 5: worst case 1 task × (2 vCPU × $0.004 + 4 GB × $0.002) × 730 h = $11.68 > cap $5.00 (not even one task fits), for a slot the size of template "default"',
    );
    expect(await mocks.settle()).toEqual([]);
  });

  it.each(["default", "kube-system"])("refuses the cluster namespace %s", async (name) => {
    await recordingMocks();
    expect(
      () => new SandboxProject(name, { budget: { monthlyCapUsd: 10 }, templates: { t: { image: "x:1" } } }),
    ).toThrow(SpecError);
  });
});

describe("RuntimeClasses of a Kubernetes project", () => {
  const templates = {
    plain: { image: "runner:1" },
    strong: { image: "runner:1", runtime: "runsc" as const },
  };

  async function classes(args: Record<string, unknown>): Promise<Registered[]> {
    const mocks = await recordingMocks({ stack: "rc" });
    const p = new SandboxProject("rc", {
      budget: { monthlyCapUsd: 300, maxConcurrentTasks: 2 },
      templates,
      ...args,
    } as ConstructorParameters<typeof SandboxProject>[1]);
    await outputValue(p.probeJobs);
    return (await mocks.settle()).filter((r) => r.type === RUNTIMECLASS);
  }

  it("takes the node's handler from the config", async () => {
    const found = await classes({ runtimeClasses: { runsc: { handler: "gvisor-systrap" } } });
    expect(found.map((r) => (r.inputs as { handler: string }).handler)).toEqual(["gvisor-systrap"]);
  });

  it("creates none when the cluster provides it, and none when no template asks for a stronger runtime", async () => {
    expect(await classes({ runtimeClasses: { runsc: { create: false } } })).toEqual([]);
    const mocks = await recordingMocks({ stack: "rc2" });
    const p = new SandboxProject("rc2", {
      budget: { monthlyCapUsd: 300, maxConcurrentTasks: 2 },
      templates: { plain: { image: "runner:1" } },
    });
    await outputValue(p.probeJobs);
    expect((await mocks.settle()).filter((r) => r.type === RUNTIMECLASS)).toEqual([]);
  });

  it("refuses a handler the API server would refuse, naming the key and what is allowed", async () => {
    await recordingMocks({ stack: "rc3" });
    const bad = () =>
      new SandboxProject("rc3", {
        budget: { monthlyCapUsd: 300, maxConcurrentTasks: 2 },
        templates,
        runtimeClasses: { runsc: { handler: "Run_SC" } },
      });
    expect(bad).toThrow(SpecError);
    expect(bad).toThrow(/kubernetes\.runtimeClasses\.runsc\.handler.*lower-case DNS label/);
  });
});

describe("a Kubernetes project under the pack's gvisor preset", () => {
  const RUNTIME_RULE = "sandbox-require-runtime-class";

  async function resources(runtime: "runc" | "runsc"): Promise<Registered[]> {
    const mocks = await recordingMocks({ stack: `gv-${runtime}` });
    const p = new SandboxProject(`gv-${runtime}`, {
      budget: { monthlyCapUsd: 300, maxConcurrentTasks: 2 },
      templates: { agent: { image: "runner:1", runtime } },
    });
    await outputValue(p.probeJobs);
    return (await mocks.settle()).filter((r) => r.custom);
  }

  it("passes what a runsc project deploys (pods of the gvisor class, a class that selects runsc) and fails runc", async () => {
    const workloads = (list: Registered[]) => list.filter((r) => r.type === PODTEMPLATE || r.type === JOB);
    const runtimeFindings = (list: Registered[]) =>
      workloads(list).flatMap((r) =>
        validate(r.type, r.inputs, { preset: "gvisor" })
          .violations.filter((v) => v.policy === RUNTIME_RULE)
          .map((v) => `${r.name}: ${v.message}`),
      );
    const strong = await resources("runsc");
    expect(workloads(strong)).toHaveLength(2);
    expect(runtimeFindings(strong)).toEqual([]);
    const stack = validateStack(strong.map((r) => ({ type: r.type, name: r.name, props: r.inputs })));
    expect(stack.violations.filter((v) => v.policy === "sandbox-disallow-weak-runtime-class")).toEqual([]);
    const plain = await resources("runc");
    expect(runtimeFindings(plain)).toEqual([
      expect.stringContaining("runtimeClassName is not set; allowed: runsc, gvisor"),
      expect.stringContaining("runtimeClassName is not set; allowed: runsc, gvisor"),
    ]);
  });
});
