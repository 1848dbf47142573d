/**
 * What the front acts on when a stack's config may no longer pass: its raw config, the Kubernetes cluster it names,
 * and the project the off switch removes. Read leniently: an off switch must never be blocked by a bad config.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  configMapFromStackYaml,
  findStackFile,
  kubernetesTargetFromConfig,
  offTargetFromConfig,
} from "../stacks/config";
import { toolkitFiles } from "../toolchain/pulumi";
import { targetFromLabels, targetFromState } from "./identity";
import type { OffTarget } from "./off";

/** The raw `namespace:key` map of a stack's config file, or undefined when it cannot be read or parsed. */
export function rawConfig(root: string, stack: string): Record<string, string> | undefined {
  try {
    const { file } = findStackFile(root, stack, toolkitFiles(root).installed);
    return configMapFromStackYaml(readFileSync(join(root, file), "utf8"), file);
  } catch {
    return undefined;
  }
}

/**
 * Where a Kubernetes stack runs, read from its config (a relative kubeconfig path is the project folder's, as the
 * program reads it); leniently when the config no longer passes (the ambient kubeconfig then).
 */
export function kubeTarget(root: string, stack: string): { kubeconfig?: string; context?: string } {
  let t: { kubeconfig?: string; context?: string } = {};
  try {
    t = kubernetesTargetFromConfig(rawConfig(root, stack) ?? {});
  } catch {
    // an invalid sandbox:kubernetes: the ambient kubeconfig
  }
  return {
    ...(t.kubeconfig === undefined ? {} : { kubeconfig: resolve(root, t.kubeconfig) }),
    ...(t.context === undefined ? {} : { context: t.context }),
  };
}

/**
 * The off switch's target when the config no longer passes: the name the stack's last deployment exported, else the
 * name on the objects the stack made (their labels), else the config read leniently (name or its default).
 */
export async function offTarget(
  root: string,
  stack: string,
  env: NodeJS.ProcessEnv,
): Promise<OffTarget & { source: string }> {
  const lenient = offTargetFromConfig(rawConfig(root, stack) ?? {}, stack);
  const { engineEnv } = await import("./engine.js");
  const backend = engineEnv(root, env).PULUMI_BACKEND_URL ?? "";
  let found = backend.startsWith("file://") ? targetFromState(backend.slice(7), stack) : undefined;
  if (found === undefined) {
    try {
      const { dockerClient } = await import("../runtime/docker/client.js");
      found = await targetFromLabels(dockerClient(env), stack);
    } catch {
      // no engine: runOff says so in its own words
    }
  }
  if (found === undefined)
    return { ...lenient, source: "the config's name (nothing of the stack was found)" };
  return {
    name: found.name,
    jobRoot: found.jobRoot ?? lenient.jobRoot,
    source: `the stack's ${found.source}`,
  };
}
