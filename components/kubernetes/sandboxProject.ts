import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  type BudgetFactsProps,
  type BudgetPlan,
  budgetFacts,
  defaultDenyPolicyName,
  FORK_COUNT_MARGIN,
  type LaunchSpec,
  launchSpec,
  limitRangeName,
  PROBE_TIMEOUT_SECONDS,
  type ProjectInput,
  type ProxySpec,
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
  templateEgressPolicyName,
} from "../model";
import { namespaceLabels, RESERVED_NAMESPACES } from "./namespace";
import { defaultDenySpec, proxyEgressSpec, proxyNetworkPolicySpec } from "./network-policies";
import { hardenedPodSpec, taskJob, taskPodLabels } from "./pod";
import { proxyConfigMap, proxyDeploymentSpec, proxyServiceSpec } from "./proxy";
import { limitRangeSpec, proxyQuotaExtra, type QuotaPlan, quotaHard, quotaPlan } from "./quota";

/**
 * A sandbox project on a Kubernetes cluster. Plain values, not outputs: the walls and the budget must be known at
 * preview, where the policy pack judges them and where a bad project is refused before anything is created.
 */
export interface SandboxProjectArgs extends Omit<ProjectInput, "name" | "backend"> {
  /** The project's name: the namespace's name and every object's prefix. Defaults to the component's name. */
  readonly name?: string;
  /** Must be `kubernetes` when given. Defaults to `kubernetes`. */
  readonly backend?: "kubernetes";
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

  constructor(name: string, args: SandboxProjectArgs, opts?: pulumi.ComponentResourceOptions) {
    const resolved = resolveKubernetesProject(name, args);
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
    new k8s.core.v1.ResourceQuota(
      `${name}-quota`,
      {
        metadata: meta(quotaName(ns)),
        spec: {
          hard: quotaHard(
            plan,
            proxy && spec.enabled ? proxyQuotaExtra(proxy) : undefined,
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

    const serviceAccount = taskServiceAccountName(ns);
    new k8s.core.v1.ServiceAccount(
      `${name}-task-sa`,
      { metadata: meta(serviceAccount, "task"), automountServiceAccountToken: false },
      inNs,
    );

    const templates: Record<string, LaunchSpec> = {};
    const probeJobs: Record<string, pulumi.Output<string>> = {};
    for (const template of Object.keys(spec.templates).sort()) {
      const launch = launchSpec(resolved, template, "none");
      templates[template] = launch;
      new k8s.core.v1.PodTemplate(
        `${name}-${template}`,
        {
          metadata: { ...meta(podTemplateName(ns, template), "task"), labels: launch.labels },
          template: {
            metadata: { labels: taskPodLabels(launch) },
            spec: hardenedPodSpec(launch, serviceAccount),
          },
        },
        inNs,
      );
      if (spec.probe && spec.enabled) {
        const script = probeScript({
          jobFolder: launch.jobFolder.containerPath,
          egressUrl: probeEgressUrl(launch.egress),
          // The process wall is on the pod's cgroup, out of the container's sight: the probe counts forks.
          countForksUpTo: launch.resources.pids + FORK_COUNT_MARGIN,
        });
        const probeSpec = {
          ...launch,
          timeoutSeconds: Math.min(launch.timeoutSeconds, PROBE_TIMEOUT_SECONDS),
          labels: projectLabels(ns, "probe", template, launch.specHash),
        };
        const job = taskJob(probeSpec, ns, "probe", serviceAccount, ["sh", "-c", script]);
        // A proxy-mode probe names the proxy's Service by its address (service links): it must exist first.
        const created = new k8s.batch.v1.Job(
          `${name}-${template}-probe`,
          { metadata: { ...job.metadata, annotations: SKIP_AWAIT }, spec: job.spec },
          launch.egress.mode === "proxy" ? { parent: this, dependsOn: [namespace, ...proxyReady] } : inNs,
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
  const resolved = resolveProject({ ...args, name: args.name ?? name, backend: "kubernetes" });
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
