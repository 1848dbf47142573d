import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import {
  type BrokerSpec,
  type BudgetFactsProps,
  type BudgetPlan,
  brokerCredentialValue,
  brokerSpec,
  brokerUnits,
  budgetFacts,
  egressNetworkName,
  givenCredential,
  type LaunchSpec,
  type Meter,
  meterOf,
  type ProbeReport,
  type ProjectInput,
  type ProxySpec,
  probeNetworkName,
  projectLabels,
  projectNetworkName,
  proxySpec,
  proxyUnits,
  type ResolvedProject,
  resolveProject,
  SpecError,
} from "../model";
import {
  brokerContainerArgs,
  dockerLabels,
  ICC_OPTION,
  type ProxyAttachment,
  proxyContainerArgs,
  TASK_NETWORK_OPTIONS,
} from "./containerArgs";
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
  /**
   * The broker's credentials, by route: each the value of the route's secret config key (a secret output). Only
   * the broker container is given them. Required for every route a template calls.
   */
  readonly brokerCredentials?: Readonly<Record<string, pulumi.Input<string>>>;
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
  /**
   * What the ledger meters the project by (the cap, the rates, the agents): give it to `openLedger` of the runtime
   * entry, so a launcher of the library admits and charges every task as the front does.
   */
  public readonly meter: pulumi.Output<Meter>;
  /** Per template, the launch spec the runtime reads. */
  public readonly templates: pulumi.Output<Record<string, LaunchSpec>>;
  /** Per template, the probe's walls report (absent when the probe is off or the project is disabled). */
  public readonly probes: pulumi.Output<Record<string, ProbeReport | undefined>>;
  /** The labels every object of the project carries. */
  public readonly labels: Record<string, string>;
  /** The egress proxy (name, listeners, generated configuration), or undefined when no template uses it. */
  public readonly proxy: pulumi.Output<ProxySpec | undefined>;
  /** The secrets broker (name, listeners, generated configuration), or undefined when the project has none. */
  public readonly broker: pulumi.Output<BrokerSpec | undefined>;

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

    // The egress proxy, when a template uses it, and the broker, when a template calls it, one container of each per
    // template: the only containers on both the project network and an egress network. Each probe of a proxy-mode or broker-calling template gets a
    // network of its own that holds the probe and the services its template reaches.
    const proxy = proxySpec(resolved, networkName);
    const broker = brokerSpec(resolved, networkName);
    this.proxy = pulumi.output(proxy);
    this.broker = pulumi.output(broker);
    const runProbes = spec.probe && spec.enabled;
    const probeNetworks: Record<string, docker.Network> = {};
    const services: docker.Container[] = [];
    if (proxy !== undefined || broker !== undefined) {
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
      const probed = [
        ...new Set([...(proxy?.listeners ?? []), ...(broker?.listeners ?? [])].map((l) => l.template)),
      ];
      if (runProbes) {
        for (const template of probed.sort()) {
          probeNetworks[template] = new docker.Network(
            `${name}-${template}-probe-net`,
            {
              name: probeNetworkName(spec.name, template),
              driver: "bridge",
              internal: true,
              attachable: false,
              options: { ...TASK_NETWORK_OPTIONS },
              labels: dockerLabels(projectLabels(spec.name, "network", template)),
            },
            { parent: this, deleteBeforeReplace: true },
          );
        }
      }
      // One container per template (see service-units): on the project network under its own name, on its
      // template's probe network under the name the template's tasks resolve.
      const attachments = (unit: string, shared: string, template: string): ProxyAttachment[] => [
        { name: network.name, aliases: [unit] },
        ...(runProbes ? [{ name: probeNetworkName(spec.name, template), aliases: [shared] }] : []),
      ];
      const serviceOpts = {
        parent: this,
        deleteBeforeReplace: true,
        dependsOn: [network, egress, ...Object.values(probeNetworks)],
      };
      // A disabled project (the hard stop) keeps its services created but stopped: nothing can go out.
      const running = { mustRun: spec.enabled, start: spec.enabled };
      for (const unit of proxy === undefined ? [] : proxyUnits(proxy)) {
        const template = unit.listeners[0]?.template ?? "";
        const own = attachments(unit.name, proxy?.name ?? "", template);
        services.push(
          new docker.Container(
            `${name}-proxy-${template}`,
            { ...proxyContainerArgs(unit, egress.name, own), ...running },
            serviceOpts,
          ),
        );
      }
      for (const unit of broker === undefined ? [] : brokerUnits(broker)) {
        const template = unit.listeners[0]?.template ?? "";
        const own = attachments(unit.name, broker?.name ?? "", template);
        const envs = unit.credentials.map((ref) => {
          const value = givenCredential(ref, args.brokerCredentials);
          // Checked and escaped for HAProxy where the value is known; a bad one fails `up` naming the key only.
          return pulumi.secret(
            pulumi.output(value).apply((v) => {
              const checked = brokerCredentialValue(v);
              if ("problem" in checked)
                throw new Error(`the credential in ${ref.configKey} ${checked.problem}`);
              return `${ref.variable}=${checked.value}`;
            }),
          );
        });
        services.push(
          new docker.Container(
            `${name}-broker-${template}`,
            { ...brokerContainerArgs(unit, envs, egress.name, own), ...running },
            serviceOpts,
          ),
        );
      }
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
          dependsOn: [network, ...(probeNetwork ? [probeNetwork, ...services] : [])],
        },
      );
      templates[template] = tt.spec;
      probes[template] = tt.probeReport;
    }
    this.templates = pulumi.output(templates);
    this.probes = pulumi.output(probes);
    this.budget = pulumi.output(resolved.budget);
    this.meter = pulumi.output(meterOf(resolved));

    this.registerOutputs({
      networkName: this.networkName,
      budget: this.budget,
      meter: this.meter,
      templates: this.templates,
      probes: this.probes,
      proxy: this.proxy,
      broker: this.broker,
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
  const { egressNetwork: _egress, brokerCredentials: _credentials, ...project } = args;
  return resolveProject({ ...project, name: args.name ?? name, backend: "docker" });
}
