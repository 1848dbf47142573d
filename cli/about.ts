/**
 * What the front says about itself and its surroundings without acting: the stacks of a folder and `--version`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inspectToolchain } from "../toolchain/pulumi";
import { checkoutCommit } from "./build-id";

/** The stack names of the stack files in the checkout (or the folder the installed front runs in). */
export function stackNames(root: string): string[] {
  const names = new Set<string>();
  for (const dir of [join(root, "stacks"), root]) {
    try {
      for (const f of readdirSync(dir)) {
        const m = /^Pulumi\.([A-Za-z0-9_.-]+)\.yaml$/.exec(f);
        if (m?.[1] !== undefined) names.add(m[1]);
      }
    } catch {
      // no such folder
    }
  }
  return [...names].sort();
}

/** `--version`: the toolkit (and the commit of an unreleased checkout), the Pulumi CLI, Node and the providers. */
export function versions(root: string, env: NodeJS.ProcessEnv): string {
  const pkg = (name: string): string => {
    try {
      const file = join(root, ...(name === "." ? [] : ["node_modules", ...name.split("/")]), "package.json");
      return (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version ?? "unknown";
    } catch {
      return "not installed";
    }
  };
  const commit = checkoutCommit(root);
  const build = commit === undefined ? "" : `+unreleased.${commit} (a checkout, not a release)`;
  const toolchain = inspectToolchain(root, [], env);
  const pulumi =
    toolchain.pulumi === undefined
      ? "not found (./sandbox up builds it; the installed front needs it on PATH)"
      : `v${toolchain.pulumi.version} (${toolchain.pulumi.path})`;
  return [
    `sandbox ${pkg(".")}${build}`,
    `pulumi ${pulumi}`,
    `node ${process.version}`,
    `@pulumi/pulumi ${pkg("@pulumi/pulumi")}, @pulumi/docker ${pkg("@pulumi/docker")}, @pulumi/kubernetes ${pkg("@pulumi/kubernetes")}`,
  ].join("\n");
}
