/**
 * The one recipe for a task's container: the launcher creates it, its preflight judges it, and `scan` judges it for a
 * launch spec, so what is judged is byte for byte what is sent. It lives here, beside the Engine API mapping, because
 * it joins the component's hardened arguments (components/docker) and that mapping (runtime/docker): components
 * import only the model, and the policy layer imports neither, while the runtime and the CLI import both.
 */
import { join } from "node:path";
import type Dockerode from "dockerode";
import { hardenedContainerArgs } from "../../components/docker/containerArgs";
import {
  LABELS,
  type LaunchSpec,
  PER_TASK_NETWORK,
  taskContainerName,
  taskNetworkName,
} from "../../components/model";
import { containerCreateBody, type PlainContainerArgs } from "./createBody";

/** One task's container of a template. */
export interface TaskContainer {
  /** The container's name on the engine. */
  readonly name: string;
  /** The host folder mounted as the task's job folder. */
  readonly jobDir: string;
  /** Proxy mode: the task's own network, which must exist before the container is created. */
  readonly network?: string;
  /** The Engine API create body (`POST /containers/create`), the name included, exactly as it is sent. */
  readonly body: Dockerode.ContainerCreateOptions;
}

/** What varies between tasks of one template. */
export interface TaskOptions {
  /** The task's command; the template's deadline is wrapped around it. Defaults to the template's command. */
  readonly command?: readonly string[];
  /**
   * The folder the job folders are under. Defaults to the spec's `jobFolder.hostRoot`; `scan`, which reads a spec
   * from a file, gives `/` when the spec names none.
   */
  readonly hostRoot?: string;
  /** The task reads standard input: the container keeps it open until the launcher closes it (`run -i`). */
  readonly stdin?: boolean;
}

/**
 * Task `id` of the template: the hardened `docker.Container` arguments (components/docker/containerArgs.ts) with the
 * task's job folder, labels and network, mapped to the create body with the template's process cap
 * (`HostConfig.PidsLimit`; a spec read from a file may lack it, and a body without one is refused by the rules).
 */
export function taskContainer(spec: LaunchSpec, id: string, options: TaskOptions = {}): TaskContainer {
  const jobDir = join(options.hostRoot ?? spec.jobFolder.hostRoot, id);
  const name = taskContainerName(spec.project, id);
  const network = spec.network === PER_TASK_NETWORK ? taskNetworkName(spec.project, id) : undefined;
  const args = hardenedContainerArgs(
    spec,
    { type: "bind", source: jobDir },
    {
      ...(options.command ? { command: options.command } : {}),
      labels: { ...spec.labels, [LABELS.task]: id },
      ...(network ? { network } : {}),
    },
  ) as PlainContainerArgs;
  const pids = spec.resources.pids;
  const made = containerCreateBody(args, { name, ...(typeof pids === "number" ? { pidsLimit: pids } : {}) });
  // Standard input, when the task reads it: open until the launcher's one attachment closes it (never a terminal).
  const body = options.stdin ? { ...made, OpenStdin: true, StdinOnce: true, AttachStdin: true } : made;
  return { name, jobDir, ...(network === undefined ? {} : { network }), body };
}
