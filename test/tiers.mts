/**
 * The test tiers, by what a test file needs besides Node:
 *
 * - `unit`: nothing: unit, Pulumi-mock and policy tests. `npm test` runs this tier.
 * - `oracle`: a Go toolchain, to build the differential oracles of test/oracles/ (test/helpers/goOracle.ts).
 * - `docker`: a Docker engine and the offline test images (toolchain/docker.sh), and nothing the toolchain builds:
 *   these need none of its builds. Only the files named in DOCKER_TESTS: a new file waits for the toolchain (`engine`).
 * - `stack`: a Docker engine with the toolchain's first builds (gVisor registered with it, PostgreSQL, the Pulumi CLI)
 *   and nothing of Kubernetes. Only the files named in STACK_TESTS.
 * - `engine`: a Docker engine, the Pulumi engine with its Kubernetes plugin, or a local Kubernetes control plane.
 * - `node`: a real Kubernetes node on this machine (test/engine/node.ts). Its kubelet's cgroups, its bridge and the
 *   iptables rules of kube-proxy and the NetworkPolicy enforcer are the machine's, so `./sandbox test` runs this tier
 *   after the other tiers that reach an engine, with only the unit and oracle tiers (CPU only) beside it.
 *
 * `./sandbox test` (toolchain/test.sh, what CI runs) runs every tier. A file's tier is its folder's, unless it is
 * named below. A file in a folder not listed here is an engine test: the safe default, since `npm test` must run
 * where no engine is; test/cli/tiers.test.ts checks that no unit test reaches an engine or Go helper, and that each
 * file named below needs what its tier says.
 */

/** The tiers: one vitest project each (vitest.config.mts). */
export const TIERS = ["unit", "oracle", "docker", "stack", "engine", "node"] as const;

/** One tier. */
export type Tier = (typeof TIERS)[number];

/** Folders of test/ whose files are unit tests, except those listed below. */
export const UNIT_FOLDERS: readonly string[] = [
  "adversarial",
  "bench",
  "broker",
  "cases",
  "cli",
  "docker",
  "kubernetes",
  "ledger",
  "model",
  "package",
  "policy",
  "proxy",
  "scan",
  "stacks",
];

/** Folders of test/ whose files start a real Kubernetes node. */
export const NODE_FOLDERS: readonly string[] = ["kube-node"];

/** Tests in the unit folders that build and run a Go oracle. */
export const ORACLE_TESTS: readonly string[] = [
  "test/adversarial/compose/spellings.test.ts",
  "test/adversarial/engine/volumes-and-lists.test.ts",
  "test/policy/engine-json.test.ts",
  "test/policy/exemptions.test.ts",
  "test/policy/presets.test.ts",
  "test/policy/sources/docker/schema.test.ts",
  "test/scan/compose.property.test.ts",
  "test/policy/sources/kubernetes/yaml-block-engine.property.test.ts",
  "test/policy/sources/kubernetes/yaml-stream.property.test.ts",
  "test/policy/sources/kubernetes/yaml.property.test.ts",
  "test/policy/sources/kubernetes/yaml.test.ts",
];

/** Tests in the unit folders that need a Docker engine. */
export const ENGINE_TESTS: readonly string[] = ["test/cli/toolchain-locks.test.ts"];

/**
 * Tests that need a Docker engine and nothing the toolchain builds (the Pulumi CLI, the Kubernetes parts, gVisor,
 * PostgreSQL, Go): test/cli/tiers.test.ts checks that none reaches them, and `./sandbox test` runs these while the
 * toolchain builds, one file at a time, as every tier.
 */
export const DOCKER_TESTS: readonly string[] = [
  "test/broker/docker.test.ts",
  "test/providers/docker.test.ts",
  "test/runtime/agent-keys.test.ts",
  "test/runtime/bench-concurrent.test.ts",
  "test/runtime/bench-ledger.test.ts",
  "test/runtime/bench-pool.test.ts",
  "test/runtime/cli.test.ts",
  "test/runtime/engine-host.test.ts",
  "test/runtime/job-disk-trial.test.ts",
  "test/runtime/job-disk.test.ts",
  "test/runtime/launcher.test.ts",
  "test/runtime/ledger.test.ts",
  "test/runtime/off-bench.test.ts",
  "test/runtime/off-broken.test.ts",
  "test/runtime/off-sticks.test.ts",
  "test/runtime/off-switch.test.ts",
  "test/runtime/orphan.test.ts",
  "test/runtime/outputs.test.ts",
  "test/runtime/pool-budget.test.ts",
  "test/runtime/pool.test.ts",
  "test/runtime/run-env.test.ts",
  "test/runtime/run-live.test.ts",
  "test/runtime/run-off.test.ts",
  "test/runtime/run-signal.test.ts",
  "test/runtime/run-stdin.test.ts",
  "test/runtime/run-verb.test.ts",
  "test/runtime/run-wait.test.ts",
  "test/runtime/service-logs.test.ts",
  "test/serve/serve.test.ts",
];

/**
 * Tests that need the Docker engine with gVisor, PostgreSQL and the Pulumi CLI, and nothing of Kubernetes (its control
 * plane, node, resource plugin or simulated nodes): test/cli/tiers.test.ts checks that none reaches them.
 */
export const STACK_TESTS: readonly string[] = [
  "test/package/consumer.test.ts",
  "test/postgres/stores.test.ts",
  "test/proxy/answering.test.ts",
  "test/proxy/docker.test.ts",
  "test/runtime/bench-launch.test.ts",
  "test/runtime/bench-runsc.test.ts",
  "test/runtime/bench-serve.test.ts",
  "test/runtime/gvisor.test.ts",
  "test/runtime/policy-gate.test.ts",
  "test/runtime/task-container.test.ts",
  "test/stacks-engine/broker.test.ts",
  "test/stacks-engine/budget-contract.test.ts",
  "test/stacks-engine/config-set.test.ts",
  "test/stacks-engine/docker.test.ts",
  "test/stacks-engine/engine-tools-stamp.test.ts",
  "test/stacks-engine/front.test.ts",
  "test/stacks-engine/preview-first.test.ts",
  "test/stacks-engine/same-verdict.test.ts",
];

/** The tier of a test file, given by its path from the repository root with `/` separators. */
export function tierOf(file: string): Tier {
  if (ORACLE_TESTS.includes(file)) return "oracle";
  if (ENGINE_TESTS.includes(file)) return "engine";
  if (DOCKER_TESTS.includes(file)) return "docker";
  if (STACK_TESTS.includes(file)) return "stack";
  const parts = file.split("/");
  if (parts.length > 2 && NODE_FOLDERS.includes(parts[1] ?? "")) return "node";
  return parts.length > 2 && UNIT_FOLDERS.includes(parts[1] ?? "") ? "unit" : "engine";
}
