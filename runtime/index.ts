/**
 * The runtime's public entry: run tasks from a template's launch spec on the local Docker engine, one fresh hardened
 * container each ({@link Launcher}, which keeps the task contract of runtime/task.ts, as the Kubernetes launcher
 * does), and switch a project off. The Kubernetes launcher has an entry of its own (`/runtime/kubernetes`,
 * runtime/kubernetes/index.ts), so that a Docker-only user never needs the Kubernetes client's types. An agent
 * builds a {@link Launcher} with the policy preflight and calls
 * `run(spec, { command })`; the launch spec comes from the stack output `templates` or from `launchSpec()`.
 */

export type { Meter } from "../components/model/metering";
export { type BrokerOptions, ensureBroker, findBroker } from "./broker";
export { dockerClient } from "./docker/client";
export type { JobSeed } from "./jobs";
export {
  ImageMissing,
  isImageMissing,
  Launcher,
  type LauncherOptions,
  LaunchRefused,
  type LimitHit,
  type Preflight,
  type TaskRequest,
  type TaskResult,
} from "./launcher";
export {
  Ledger,
  type LedgerOptions,
  type LedgerQueries,
  type LedgerStore,
  SqliteLedgerStore,
  type SqlValue,
  type WriteOptions,
} from "./ledger";
export { defaultLedgerFile, type OpenLedgerOptions, openLedger } from "./ledger/open";
export { LedgerGone } from "./ledger/witness";
export {
  OFF_CONCURRENCY,
  type OffFailure,
  type OffOptions,
  type OffReport,
  OffSwitchError,
  offSwitch,
  projectLeftovers,
} from "./offSwitch";
export { type PoolMember, type PoolRequest, poolMemberName, WarmPool, type WarmPoolOptions } from "./pool";
export { policyPreflight, type RuleConfig } from "./preflight";
export { ensureProxy, type ProxyOptions } from "./proxy";
export {
  SandboxClient,
  type SandboxClientOptions,
  SandboxConnectionError,
  type SandboxRunOptions,
  type SandboxRunResult,
  SandboxServiceError,
} from "./serve/client";
export type { TaskLauncher } from "./task";
