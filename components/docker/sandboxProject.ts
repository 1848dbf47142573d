import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import {
  type BudgetFactsProps,
  type BudgetPlan,
  budgetFacts,
  egressNetworkName,
  type LaunchSpec,
  type ProbeReport,
  type ProjectInput,
  type ProxySpec,
  probeNetworkName,
  projectLabels,
  projectNetworkName,
  proxySpec,
  type ResolvedProject,
  resolveProject,
  SpecError,
} from "../model";
import { dockerLabels, ICC_OPTION, type ProxyAttachment, proxyContainerArgs } from "./containerArgs";
import { TaskTemplate } from "./taskTemplate";

/**
 * A sandbox project on one Docker engine. Plain values, not outputs: every wall and the budget must be known at
 * preview, where the policy pack judges them and where a bad project must be refused before anything is created.
 */
export interface SandboxProjectArgs extends Omit<ProjectInput, "name" | "backend"> {
  /** The project's name, which prefixes and labels every object. Defaults to the component's name. */
  readonly name?: string;
  /** Must be `docker` when given; the Kubernetes backend has its own component. Defaults to `docker`. */
  readonly backend?: "docker";
  /**
   * The network the egress proxy reaches the outside through (created only when a template uses the proxy). In use a
   * plain bridge (`internal: false`, the default); `internal: true` keeps even the proxy on the machine (tests).
   */
  readonly egressNetwork?: { readonly internal?: boolean; readonly subnet?: string };
}

export { ICC_OPTION } from "./containerArgs";

/**
 * A sandbox project on Docker: a private `internal` network with inter-container traffic disabled, and per task
 * template its launch spec and, unless turned off, a probe run that proves the walls. The budget is checked at
 * construction: a project whose worst case exceeds its cap registers nothing.
 */
export class SandboxProject extends pulumi.ComponentResource {
  /** The checked project. */
  public readonly resolved: ResolvedProject;
  /** The project network's name on the engine. */
  public readonly networkName: pulumi.Output<string>;
  /** The budget plan: tasks at once, and the worst-case arithmetic. */
  public readonly budget: pulumi.Output<BudgetPlan>;
  /** Per template, the launch spec the runtime reads. */
  public readonly templates: pulumi.Output<Record<string, LaunchSpec>>;
  /** Per template, the probe's walls report (absent when the probe is off or the project is disabled). */
  public readonly probes: pulumi.Output<Record<string, ProbeReport | undefined>>;
  /** The labels every object of the project carries. */
  public readonly labels: Record<string, string>;
  /** The egress proxy (name, listeners, generated configuration), or undefined when no template uses it. */
  public readonly proxy: pulumi.Output<ProxySpec | undefined>;

  constructor(name: string, args: SandboxProjectArgs, opts?: pulumi.ComponentResourceOptions) {
    const resolved = resolveDockerProject(name, args);
    const spec = resolved.spec;
    // The budget facts, among the component's inputs and its outputs: what the stack policy proves the budget from.
    const facts: BudgetFactsProps = { budgetFacts: budgetFacts(resolved) };
    super("sandbox:docker:SandboxProject", name, facts, opts);
    this.resolved = resolved;
    this.labels = projectLabels(spec.name, "network");

    const networkName = projectNetworkName(spec.name);
    const network = new docker.Network(
      `${name}-net`,
      {
        name: networkName,
        driver: "bridge",
        internal: true,
        attachable: false,
        options: { [ICC_OPTION]: "false" },
        ipamConfigs: spec.network.subnet === undefined ? undefined : [{ subnet: spec.network.subnet }],
        labels: dockerLabels(this.labels),
      },
      { parent: this, deleteBeforeReplace: true },
    );
    this.networkName = network.name;

    // The egress proxy, when a template uses it: the only container on both the project network and an egress
    // network. Each probe of a proxy-mode template gets a network of its own that holds the probe and the proxy.
    const proxy = proxySpec(resolved, networkName);
    this.proxy = pulumi.output(proxy);
    const runProbes = spec.probe && spec.enabled;
    const probeNetworks: Record<string, docker.Network> = {};
    let proxyContainer: docker.Container | undefined;
    if (proxy !== undefined) {
      const egress = new docker.Network(
        `${name}-egress`,
        {
          name: egressNetworkName(spec.name),
          driver: "bridge",
          internal: args.egressNetwork?.internal ?? false,
          attachable: false,
          ipamConfigs:
            args.egressNetwork?.subnet === undefined ? undefined : [{ subnet: args.egressNetwork.subnet }],
          labels: dockerLabels(this.labels),
        },
        { parent: this, deleteBeforeReplace: true },
      );
      const attachments: ProxyAttachment[] = [{ name: network.name, aliases: [proxy.name] }];
      if (runProbes) {
        for (const l of proxy.listeners) {
          probeNetworks[l.template] = new docker.Network(
            `${name}-${l.template}-probe-net`,
            {
              name: probeNetworkName(spec.name, l.template),
              driver: "bridge",
              internal: true,
              attachable: false,
              labels: dockerLabels(projectLabels(spec.name, "network", l.template)),
            },
            { parent: this, deleteBeforeReplace: true },
          );
          attachments.push({ name: probeNetworkName(spec.name, l.template), aliases: [proxy.name] });
        }
      }
      proxyContainer = new docker.Container(
        `${name}-proxy`,
        // A disabled project (the hard stop) keeps its proxy created but stopped: nothing can go out.
        {
          ...proxyContainerArgs(proxy, egress.name, attachments),
          mustRun: spec.enabled,
          start: spec.enabled,
        },
        {
          parent: this,
          deleteBeforeReplace: true,
          dependsOn: [network, egress, ...Object.values(probeNetworks)],
        },
      );
    }

    const templates: Record<string, pulumi.Output<LaunchSpec>> = {};
    const probes: Record<string, pulumi.Output<ProbeReport | undefined>> = {};
    for (const template of Object.keys(spec.templates).sort()) {
      const probeNetwork = probeNetworks[template];
      const tt = new TaskTemplate(
        `${name}-${template}`,
        {
          project: resolved,
          template,
          networkName,
          probe: spec.probe,
          ...(probeNetwork ? { probeNetwork: probeNetworkName(spec.name, template) } : {}),
        },
        {
          parent: this,
          dependsOn: [network, ...(probeNetwork && proxyContainer ? [probeNetwork, proxyContainer] : [])],
        },
      );
      templates[template] = tt.spec;
      probes[template] = tt.probeReport;
    }
    this.templates = pulumi.output(templates);
    this.probes = pulumi.output(probes);
    this.budget = pulumi.output(resolved.budget);

    this.registerOutputs({
      networkName: this.networkName,
      budget: this.budget,
      templates: this.templates,
      probes: this.probes,
      proxy: this.proxy,
      enabled: spec.enabled,
      ...facts,
    });
  }
}

/** Checks the args as a Docker project named `name` (unless they name it), or throws one SpecError. */
export function resolveDockerProject(name: string, args: SandboxProjectArgs): ResolvedProject {
  if ((args as { backend?: string }).backend !== undefined && args.backend !== "docker") {
    throw new SpecError([
      {
        key: "backend",
        value: JSON.stringify((args as { backend?: string }).backend),
        message:
          'the Docker SandboxProject takes backend "docker" only; use the Kubernetes component for "kubernetes"',
      },
    ]);
  }
  return resolveProject({ ...args, name: args.name ?? name, backend: "docker" });
}
