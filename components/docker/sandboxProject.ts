import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { Budget, BudgetPlan } from "../spec/budget";
import { SpecError } from "../spec/errors";
import { type LaunchSpec, projectLabels } from "../spec/launch";
import type { ProbeReport } from "../spec/probe";
import { type ProjectInput, type ResolvedProject, resolveProject } from "../spec/project";
import { dockerLabels } from "./containerArgs";
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
}

/** Docker's bridge option that stops containers on one network from reaching each other. */
export const ICC_OPTION = "com.docker.network.bridge.enable_icc";

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

  constructor(name: string, args: SandboxProjectArgs, opts?: pulumi.ComponentResourceOptions) {
    const resolved = resolveDockerProject(name, args);
    const spec = resolved.spec;
    super("sandbox:docker:SandboxProject", name, componentInputs(resolved), opts);
    this.resolved = resolved;
    this.labels = projectLabels(spec.name, "network");

    const networkName = `${spec.name}-net`;
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

    const templates: Record<string, pulumi.Output<LaunchSpec>> = {};
    const probes: Record<string, pulumi.Output<ProbeReport | undefined>> = {};
    for (const template of Object.keys(spec.templates).sort()) {
      const tt = new TaskTemplate(
        `${name}-${template}`,
        { project: resolved, template, networkName, probe: spec.probe },
        { parent: this, dependsOn: [network] },
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
      enabled: spec.enabled,
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

/**
 * What the component registers as its own inputs: the facts a stack policy needs (the budget and its plan), as
 * known values, so `validateStack` can prove the budget without reading the component's code.
 */
function componentInputs(p: ResolvedProject): {
  project: string;
  backend: "docker";
  enabled: boolean;
  budget: Budget;
  maxConcurrentTasks: number;
  worstCaseUsd: number;
} {
  return {
    project: p.spec.name,
    backend: "docker",
    enabled: p.spec.enabled,
    budget: p.spec.budget,
    maxConcurrentTasks: p.budget.concurrency,
    worstCaseUsd: p.budget.worstCaseUsd,
  };
}
