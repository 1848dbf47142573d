import * as pulumi from "@pulumi/pulumi";
import { SandboxProject } from "../components/docker";
import { type ResolvedProject, SpecError } from "../components/spec";
import { projectFromConfig } from "./config";

/** What the stack exports: what the runtime reads and what a person checks after `up`. */
export interface StackOutputs {
  project: string;
  backend: string;
  enabled: boolean;
  budget: pulumi.Output<unknown>;
  networkName: pulumi.Output<string>;
  templates: pulumi.Output<unknown>;
  probes: pulumi.Output<unknown>;
}

/**
 * Reads the stack config once, at the edge, and builds the project on its backend. A bad config ends the program
 * with one readable message (a RunError prints no stack trace) before any resource is registered.
 */
export function checkedProject(): ResolvedProject {
  try {
    return projectFromConfig(pulumi.runtime.allConfig(), pulumi.getStack());
  } catch (e) {
    if (e instanceof SpecError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

/** The Pulumi program of a sandbox project: the same function for `pulumi up` and the Automation API. */
export async function sandboxProgram(): Promise<StackOutputs> {
  const resolved = checkedProject();
  const spec = resolved.spec;
  if (spec.backend !== "docker") {
    throw new pulumi.RunError(
      `invalid sandbox project config:\n  - sandbox:backend = "${spec.backend}": this version builds the "docker" backend only; the Kubernetes backend is not part of it yet`,
    );
  }
  const { name: _name, backend: _backend, ...args } = spec;
  const project = new SandboxProject(spec.name, { ...args, name: spec.name });
  return {
    project: spec.name,
    backend: spec.backend,
    enabled: spec.enabled,
    budget: project.budget,
    networkName: project.networkName,
    templates: project.templates,
    probes: project.probes,
  };
}
