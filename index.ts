/**
 * The package's main entry: the sandbox project components for both backends and the model they are built from.
 *
 *   import { docker, kubernetes, resolveProject } from "@sandbox-projects/toolkit";
 *   new docker.SandboxProject("agents", { budget: { monthlyCapUsd: 10 }, templates: { default: { image } } });
 *
 * The other entry points: `/docker`, `/kubernetes` and `/model` (one backend, or the model alone), `/runtime` (the
 * task launcher and the off switch), `/policy` (the rules, `judge` and `packArgs`), `/scan` (`scan` as a function),
 * `/pack`, the CrossGuard pack itself (`policy-pack/` in the package is the folder to point the engine at), and
 * `/client`, the launch service's client alone (Node's own modules only; also exported here).
 */
export { docker, kubernetes } from "./components";
export * from "./components/model";
export {
  SandboxClient,
  type SandboxClientOptions,
  SandboxConnectionError,
  type SandboxRunOptions,
  type SandboxRunResult,
  SandboxServiceError,
} from "./runtime/serve/client";
