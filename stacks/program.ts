import { readFileSync } from "node:fs";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SandboxProject } from "../components/docker";
import { SandboxProject as KubernetesSandboxProject } from "../components/kubernetes";
import { type ResolvedProject, SpecError } from "../components/model";
import {
  brokerCredentialsFromConfig,
  type KubernetesTarget,
  kubernetesTargetFromConfig,
  projectFromConfig,
} from "./config";

/** What the stack exports: what the runtime reads and what a person checks after `up`. */
export interface StackOutputs {
  project: string;
  backend: string;
  enabled: boolean;
  budget: pulumi.Output<unknown>;
  /** Docker: the project network. */
  networkName?: pulumi.Output<string>;
  /** Kubernetes: the project namespace and what its quota admits. */
  namespace?: pulumi.Output<string>;
  quota?: pulumi.Output<unknown>;
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

/**
 * Whether the engine holds a config key encrypted. The SDK keeps the engine's list of secret keys in its config
 * store and answers with `runtime.isConfigSecret` (present in the SDK, left out of its typings); without it every
 * key reads as plain, so a broker credential is refused rather than trusted.
 */
export function isSecretConfigKey(key: string): boolean {
  const ask = (pulumi.runtime as unknown as { isConfigSecret?: (k: string) => boolean }).isConfigSecret;
  return typeof ask === "function" ? ask(key) : false;
}

/** The broker's credentials, as secret outputs by route, or a readable end of the program. */
function checkedBrokerCredentials(resolved: ResolvedProject): Record<string, pulumi.Output<string>> {
  try {
    const values = brokerCredentialsFromConfig(pulumi.runtime.allConfig(), resolved, isSecretConfigKey);
    return Object.fromEntries(Object.entries(values).map(([r, v]) => [r, pulumi.secret(v)]));
  } catch (e) {
    if (e instanceof SpecError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

/**
 * The walls report of each template's probe Job, once `up` has created it: waited for (bounded, progress in the
 * engine's log) and read through the Kubernetes API. A preview knows no report.
 */
function kubernetesProbes(
  project: KubernetesSandboxProject,
  resolved: ResolvedProject,
  target: KubernetesTarget,
): pulumi.Output<Record<string, unknown>> {
  return project.probeJobs.apply(async (jobs) => {
    if (pulumi.runtime.isDryRun() || Object.keys(jobs).length === 0) return {};
    const { kubeApis } = await import("../runtime/kubernetes/api.js");
    const { probeJobReport, waitForProbeJob } = await import("../runtime/kubernetes/probe-job.js");
    // The cluster's address comes from the same kubeconfig the provider used; should it not be readable here, every
    // report says so (the walls stay unobserved) instead of the program failing after its resources exist.
    let apis: Awaited<ReturnType<typeof kubeApis>> | undefined;
    let unreadable: string | undefined;
    try {
      apis = await kubeApis(target);
    } catch (e) {
      unreadable = `the probe Jobs were not read: ${e instanceof Error ? e.message : String(e)}`;
    }
    const ns = resolved.spec.name;
    const entries = await Promise.all(
      Object.entries(jobs).map(async ([template, job]) => {
        const t = resolved.spec.templates[template];
        if (t === undefined) return [template, undefined] as const;
        const outcome =
          apis === undefined
            ? { problem: unreadable ?? "the probe Jobs were not read" }
            : await waitForProbeJob(apis, ns, job, {
                progress: (line) => pulumi.log.info(line, project),
              }).catch((e: unknown) => ({
                problem: `the probe Job ${job} was not read: ${e instanceof Error ? e.message : String(e)}`,
              }));
        if (outcome.problem !== undefined) pulumi.log.warn(outcome.problem, project);
        return [template, { job, ...probeJobReport(t, outcome) }] as const;
      }),
    );
    return Object.fromEntries(entries.filter(([, r]) => r !== undefined));
  });
}

/** The Pulumi program of a sandbox project: the same function for `pulumi up` and the Automation API. */
export async function sandboxProgram(): Promise<StackOutputs> {
  const resolved = checkedProject();
  const spec = resolved.spec;
  const { name: _name, backend: _backend, ...args } = spec;
  if (spec.backend === "kubernetes") {
    let target: KubernetesTarget;
    try {
      target = kubernetesTargetFromConfig(pulumi.runtime.allConfig());
    } catch (e) {
      if (e instanceof SpecError) throw new pulumi.RunError(e.message);
      throw e;
    }
    const provider = new k8s.Provider(`${spec.name}-cluster`, {
      ...(target.kubeconfig === undefined ? {} : { kubeconfig: readFileSync(target.kubeconfig, "utf8") }),
      ...(target.context === undefined ? {} : { context: target.context }),
    });
    const project = new KubernetesSandboxProject(
      spec.name,
      {
        ...args,
        name: spec.name,
        brokerCredentials: checkedBrokerCredentials(resolved),
        ...(target.runtimeClasses === undefined ? {} : { runtimeClasses: target.runtimeClasses }),
      },
      { providers: [provider] },
    );
    return {
      project: spec.name,
      backend: spec.backend,
      enabled: spec.enabled,
      budget: project.budget,
      quota: project.quota,
      namespace: project.namespaceName,
      templates: project.templates,
      probes: kubernetesProbes(project, resolved, target),
    };
  }
  const project = new SandboxProject(spec.name, {
    ...args,
    name: spec.name,
    brokerCredentials: checkedBrokerCredentials(resolved),
  });
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
