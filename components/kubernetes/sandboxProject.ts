import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  type BrokerSpec,
  type BudgetFactsProps,
  type BudgetPlan,
  brokerCredentialValue,
  brokerPolicyName,
  brokerSpec,
  budgetFacts,
  credentialsHash,
  defaultDenyPolicyName,
  FORK_COUNT_MARGIN,
  givenCredential,
  type LaunchSpec,
  launchSpec,
  limitRangeName,
  PROBE_TIMEOUT_SECONDS,
  type ProjectInput,
  type ProxySpec,
  parseOrThrow,
  podTemplateName,
  probeEgressUrl,
  probeScript,
  projectLabels,
  proxyPolicyName,
  proxySpec,
  quotaName,
  type ResolvedProject,
  ResourcesSchema,
  resolveProject,
  SpecError,
  taskServiceAccountName,
  templateBrokerPolicyName,
  templateEgressPolicyName,
} from "../model";
import { brokerConfigMap, brokerDeploymentSpec, brokerSecretMetadata, brokerServiceSpec } from "./broker";
import { namespaceLabels, RESERVED_NAMESPACES } from "./namespace";
import {
  brokerEgressSpec,
  brokerNetworkPolicySpec,
  defaultDenySpec,
  proxyEgressSpec,
  proxyNetworkPolicySpec,
} from "./network-policies";
import { hardenedPodSpec, TASK_POD_ANNOTATIONS, taskJob, taskPodLabels } from "./pod";
import { proxyConfigMap, proxyDeploymentSpec, proxyServiceSpec } from "./proxy";
import {
  brokerQuotaExtra,
  holderQuotaExtra,
  limitRangeSpec,
  proxyQuotaExtra,
  type QuotaPlan,
  quotaHard,
  quotaPlan,
  sumQuotaExtras,
} from "./quota";
import { type RuntimeClassSettings, RuntimeClassSettingsSchema, runtimeClassPlans } from "./runtime-class";

/**
 * A sandbox project on a Kubernetes cluster. Plain values, not outputs: the walls and the budget must be known at
 * preview, where the policy pack judges them and where a bad project is refused before anything is created.
 */
export interface SandboxProjectArgs extends Omit<ProjectInput, "name" | "backend"> {
  /** The project's name: the namespace's name and every object's prefix. Defaults to the component's name. */
  readonly name?: string;
  /** Must be `kubernetes` when given. Defaults to `kubernetes`. */
  readonly backend?: "kubernetes";
  /**
   * The broker's credentials, by route: each the value of the route's secret config key (a secret output). They go
   * into the broker's Secret, which only the broker's pod mounts. Required for every route a template calls.
   */
  readonly brokerCredentials?: Readonly<Record<string, pulumi.Input<string>>>;
  /**
   * Per stronger runtime (`runsc`, `kata`), whether the project creates the RuntimeClass its pods name (`gvisor`,
   * `kata`) and the node handler it selects. Defaults: created, handler `runsc` / `kata`.
   */
  readonly runtimeClasses?: RuntimeClassSettings;
}

/** The Metadata the probe Job needs to not block `up` on clusters that do not run it at once. */
const SKIP_AWAIT = { "pulumi.com/skipAwait": "true" };

/**
 * A sandbox project on Kubernetes: a namespace enforcing Pod Security `restricted`, a ResourceQuota derived from the
 * budget (`enabled: false` makes it zero, the hard stop), a LimitRange, default-deny NetworkPolicies (plus egress to
 * the proxy only, in proxy mode), a task ServiceAccount without a token or bindings, and one PodTemplate per task
 * template holding the hardened pod spec. The same spec as the Docker backend, the same walls.
 */
export class SandboxProject extends pulumi.ComponentResource {
  public readonly resolved: ResolvedProject;
  /** The project namespace's name. */
  public readonly namespaceName: pulumi.Output<string>;
  /** The budget plan: tasks at once and the worst-case arithmetic. */
  public readonly budget: pulumi.Output<BudgetPlan>;
  /** What the ResourceQuota admits, with its arithmetic. */
  public readonly quota: pulumi.Output<QuotaPlan>;
  /** Per template, the launch spec (also stored in the cluster as a PodTemplate). */
  public readonly templates: pulumi.Output<Record<string, LaunchSpec>>;
  /** Per template, the name of its probe Job (absent when the probe is off or the project disabled). */
  public readonly probeJobs: pulumi.Output<Record<string, string>>;
  /** The egress proxy (Service name, listeners, generated configuration), or undefined when no template uses it. */
  public readonly proxy: pulumi.Output<ProxySpec | undefined>;
  /** The secrets broker (Service name, listeners, generated configuration), or undefined when there is none. */
  public readonly broker: pulumi.Output<BrokerSpec | undefined>;

  constructor(name: string, args: SandboxProjectArgs, opts?: pulumi.ComponentResourceOptions) {
    const resolved = resolveKubernetesProject(name, args);
    const runtimeClassSettings = parseOrThrow(
      RuntimeClassSettingsSchema,
      args.runtimeClasses ?? {},
      "kubernetes.runtimeClasses",
      "invalid sandbox project config",
    );
    const spec = resolved.spec;
    const ns = spec.name;
    const plan = quotaPlan(resolved.budget.concurrency, resolved.slot, spec.budget);
    // The budget facts, among the component's inputs and its outputs: what the stack policy proves the budget from.
    const facts: BudgetFactsProps = { budgetFacts: budgetFacts(resolved) };
    super("sandbox:kubernetes:SandboxProject", name, facts, opts);
    this.resolved = resolved;
    const child = { parent: this };

    const namespace = new k8s.core.v1.Namespace(
      `${name}-ns`,
      { metadata: { name: ns, labels: namespaceLabels(ns) } },
      child,
    );
    const inNs = { parent: this, dependsOn: [namespace] };
    const meta = (n: string, role: Parameters<typeof projectLabels>[1] = "network") => ({
      name: n,
      namespace: ns,
      labels: projectLabels(ns, role),
    });

    // The proxy (when a template uses it) is always on: the quota holds its pod on top of the task slots.
    const proxy = proxySpec(resolved, ns);
    const broker = brokerSpec(resolved, ns);
    new k8s.core.v1.ResourceQuota(
      `${name}-quota`,
      {
        metadata: meta(quotaName(ns)),
        spec: {
          hard: quotaHard(
            plan,
            spec.enabled
              ? sumQuotaExtras([
                  holderQuotaExtra(plan.tasks),
                  proxy && proxyQuotaExtra(proxy),
                  broker && brokerQuotaExtra(broker),
                ])
              : undefined,
            spec.probe && spec.enabled ? Object.keys(spec.templates).length : 0,
          ),
        },
      },
      inNs,
    );

    const defaults = ResourcesSchema.parse({});
    new k8s.core.v1.LimitRange(
      `${name}-limits`,
      { metadata: meta(limitRangeName(ns)), spec: limitRangeSpec(defaults, resolved.slot) },
      inNs,
    );

    new k8s.networking.v1.NetworkPolicy(
      `${name}-default-deny`,
      { metadata: meta(defaultDenyPolicyName(ns)), spec: defaultDenySpec() },
      inNs,
    );
    // The egress proxy, when a template uses it: a Deployment and its Service, its configuration in a ConfigMap, its
    // own policy (in from proxy-mode tasks only, out to DNS and the outside minus the refused ranges), and per
    // proxy-mode template a policy that lets its pods reach that template's proxy port and nothing else.
    this.proxy = pulumi.output(proxy);
    const proxyReady: pulumi.Resource[] = [];
    if (proxy !== undefined) {
      for (const l of proxy.listeners) {
        new k8s.networking.v1.NetworkPolicy(
          `${name}-${l.template}-egress-proxy`,
          { metadata: meta(templateEgressPolicyName(ns, l.template)), spec: proxyEgressSpec(l) },
          inNs,
        );
      }
      new k8s.networking.v1.NetworkPolicy(
        `${name}-proxy-policy`,
        { metadata: meta(proxyPolicyName(ns), "proxy"), spec: proxyNetworkPolicySpec(proxy) },
        inNs,
      );
      const proxySa = new k8s.core.v1.ServiceAccount(
        `${name}-proxy-sa`,
        { metadata: meta(proxy.name, "proxy"), automountServiceAccountToken: false },
        inNs,
      );
      const config = new k8s.core.v1.ConfigMap(`${name}-proxy-config`, proxyConfigMap(proxy), inNs);
      proxyReady.push(
        new k8s.core.v1.Service(
          `${name}-proxy`,
          { metadata: meta(proxy.name, "proxy"), spec: proxyServiceSpec(proxy) },
          inNs,
        ),
        new k8s.apps.v1.Deployment(
          `${name}-proxy`,
          {
            metadata: { ...meta(proxy.name, "proxy"), labels: { ...proxy.labels } },
            spec: proxyDeploymentSpec(proxy, proxy.name, spec.enabled),
          },
          { parent: this, dependsOn: [namespace, config, proxySa] },
        ),
      );
    }

    // The broker, when a template calls it: a Deployment and its Service, its configuration in a ConfigMap and its
    // credentials in a Secret only its pod mounts, its own policy (in from each template's pods on that template's
    // port, out to DNS and the outside minus the refused ranges), and per such template a way to its port.
    this.broker = pulumi.output(broker);
    const brokerReady: pulumi.Resource[] = [];
    if (broker !== undefined) {
      for (const l of broker.listeners) {
        new k8s.networking.v1.NetworkPolicy(
          `${name}-${l.template}-broker`,
          { metadata: meta(templateBrokerPolicyName(ns, l.template)), spec: brokerEgressSpec(l) },
          inNs,
        );
      }
      new k8s.networking.v1.NetworkPolicy(
        `${name}-broker-policy`,
        { metadata: meta(brokerPolicyName(ns), "broker"), spec: brokerNetworkPolicySpec(broker) },
        inNs,
      );
      const values = pulumi.output(
        Object.fromEntries(
          broker.credentials.map((ref) => {
            const value = givenCredential(ref, args.brokerCredentials);
            return [ref.variable, value];
          }),
        ) as Record<string, pulumi.Input<string>>,
      );
      // Checked and escaped for HAProxy where the values are known; a bad one fails `up` naming the key only.
      const escaped = values.apply((v) =>
        Object.fromEntries(
          broker.credentials.map((ref) => {
            const checked = brokerCredentialValue(v[ref.variable] ?? "");
            if ("problem" in checked)
              throw new Error(`the credential in ${ref.configKey} ${checked.problem}`);
            return [ref.variable, checked.value];
          }),
        ),
      );
      const secret = new k8s.core.v1.Secret(
        `${name}-broker-credentials`,
        { metadata: brokerSecretMetadata(broker), type: "Opaque", stringData: pulumi.secret(escaped) },
        inNs,
      );
      const brokerSa = new k8s.core.v1.ServiceAccount(
        `${name}-broker-sa`,
        { metadata: meta(broker.name, "broker"), automountServiceAccountToken: false },
        inNs,
      );
      const config = new k8s.core.v1.ConfigMap(`${name}-broker-config`, brokerConfigMap(broker), inNs);
      const hash = pulumi.unsecret(escaped.apply((v) => credentialsHash(ns, v)));
      brokerReady.push(
        new k8s.core.v1.Service(
          `${name}-broker`,
          { metadata: meta(broker.name, "broker"), spec: brokerServiceSpec(broker) },
          inNs,
        ),
        new k8s.apps.v1.Deployment(
          `${name}-broker`,
          {
            metadata: { ...meta(broker.name, "broker"), labels: { ...broker.labels } },
            spec: brokerDeploymentSpec(broker, broker.name, hash, spec.enabled),
          },
          { parent: this, dependsOn: [namespace, config, secret, brokerSa] },
        ),
      );
    }

    const serviceAccount = taskServiceAccountName(ns);
    new k8s.core.v1.ServiceAccount(
      `${name}-task-sa`,
      { metadata: meta(serviceAccount, "task"), automountServiceAccountToken: false },
      inNs,
    );

    const templates: Record<string, LaunchSpec> = {};
    const probeJobs: Record<string, pulumi.Output<string>> = {};
    const launches = Object.keys(spec.templates)
      .sort()
      .map((template) => [template, launchSpec(resolved, template, "none")] as const);
    // The RuntimeClasses the stronger runtimes' pods name: cluster-wide objects, so they carry the project's labels
    // but no namespace. A pod naming a class that does not exist is refused at admission.
    const runtimeClasses = new Map<string, k8s.node.v1.RuntimeClass>();
    for (const plan of runtimeClassPlans(
      launches.map(([, l]) => l),
      runtimeClassSettings,
    )) {
      runtimeClasses.set(
        plan.runtime,
        new k8s.node.v1.RuntimeClass(
          `${name}-runtime-${plan.runtime}`,
          { metadata: { name: plan.name, labels: projectLabels(ns, "runtime") }, handler: plan.handler },
          child,
        ),
      );
    }
    for (const [template, launch] of launches) {
      templates[template] = launch;
      new k8s.core.v1.PodTemplate(
        `${name}-${template}`,
        {
          metadata: { ...meta(podTemplateName(ns, template), "task"), labels: launch.labels },
          template: {
            metadata: { labels: taskPodLabels(launch), annotations: { ...TASK_POD_ANNOTATIONS } },
            spec: hardenedPodSpec(launch, serviceAccount),
          },
        },
        inNs,
      );
      if (spec.probe && spec.enabled) {
        const script = probeScript({
          jobFolder: launch.jobFolder.containerPath,
          egressUrl: probeEgressUrl(launch.egress),
          // The process wall is on the pod's cgroup, out of the container's sight: the probe counts forks. Not
          // under gVisor, whose own threads share that limit (exhausting it stops the sandbox).
          ...(launch.runtime === "runsc"
            ? {}
            : { countForksUpTo: launch.resources.pids + FORK_COUNT_MARGIN }),
          ...(launch.broker?.probe === undefined ? {} : { broker: launch.broker.probe }),
        });
        const probeSpec = {
          ...launch,
          timeoutSeconds: Math.min(launch.timeoutSeconds, PROBE_TIMEOUT_SECONDS),
          labels: projectLabels(ns, "probe", template, launch.specHash),
        };
        // No holder: the probe's result is its log, and its pod ends with it (and frees its quota).
        const job = taskJob(probeSpec, ns, "probe", serviceAccount, ["sh", "-c", script], false);
        // A proxy-mode or broker-calling probe names the Service by its address (service links): it must exist first.
        const runtimeClass = launch.runtime === "runc" ? undefined : runtimeClasses.get(launch.runtime);
        const services = [
          ...(launch.egress.mode === "proxy" ? proxyReady : []),
          ...(launch.broker !== undefined ? brokerReady : []),
          ...(runtimeClass === undefined ? [] : [runtimeClass]),
        ];
        const created = new k8s.batch.v1.Job(
          `${name}-${template}-probe`,
          { metadata: { ...job.metadata, annotations: SKIP_AWAIT }, spec: job.spec },
          services.length > 0 ? { parent: this, dependsOn: [namespace, ...services] } : inNs,
        );
        probeJobs[template] = created.metadata.name;
      }
    }

    this.namespaceName = namespace.metadata.name;
    this.budget = pulumi.output(resolved.budget);
    this.quota = pulumi.output(plan);
    this.templates = pulumi.output(templates);
    this.probeJobs = pulumi.output(probeJobs);
    this.registerOutputs({
      namespaceName: this.namespaceName,
      budget: this.budget,
      quota: this.quota,
      templates: this.templates,
      probeJobs: this.probeJobs,
      proxy: this.proxy,
      broker: this.broker,
      enabled: spec.enabled,
      ...facts,
    });
  }
}

/** Checks the args as a Kubernetes project named `name` (unless they name it), or throws one SpecError. */
export function resolveKubernetesProject(name: string, args: SandboxProjectArgs): ResolvedProject {
  const backend = (args as { backend?: string }).backend;
  if (backend !== undefined && backend !== "kubernetes") {
    throw new SpecError([
      {
        key: "backend",
        value: JSON.stringify(backend),
        message:
          'the Kubernetes SandboxProject takes backend "kubernetes" only; use the Docker component for "docker"',
      },
    ]);
  }
  const { brokerCredentials: _credentials, runtimeClasses: _classes, ...project } = args;
  const resolved = resolveProject({ ...project, name: args.name ?? name, backend: "kubernetes" });
  if (RESERVED_NAMESPACES.includes(resolved.spec.name)) {
    throw new SpecError([
      {
        key: "name",
        value: JSON.stringify(resolved.spec.name),
        message: `the project's namespace must not be a cluster namespace (${RESERVED_NAMESPACES.join(", ")})`,
      },
    ]);
  }
  return resolved;
}
