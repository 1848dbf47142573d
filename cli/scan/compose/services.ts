/** A Compose file -> its loaded project's services as `docker.Container` props, or the input error that stops it. */

import { type ComposeHost, loadComposeProject, type ProjectFileSet } from "./load";
import { isMap, type Model } from "./merge";
import { projectServiceProps } from "./project";
import { ComposeError } from "./yaml";

export interface ComposeService {
  readonly name: string;
  readonly props: Record<string, unknown>;
  /** The service as loaded (long syntax), for locating findings by key. */
  readonly spec: Model;
}

export type ComposeServices =
  | { readonly services: readonly ComposeService[]; readonly assumptions: readonly string[] }
  | { readonly error: ComposeError };

/** Loads the project of `path` (text `source`) and converts every service, profiles included. */
export function loadComposeServices(
  path: string,
  source: string,
  host: ComposeHost,
  set?: ProjectFileSet,
): ComposeServices {
  let project: Model;
  let assumptions: readonly string[];
  try {
    ({ model: project, assumptions } = loadComposeProject(path, source, host, set));
  } catch (e) {
    if (e instanceof ComposeError) return { error: e };
    if (e instanceof RangeError) return { error: new ComposeError(`too deeply nested: ${e.message}`) };
    throw e;
  }
  const services = isMap(project.services) ? project.services : {};
  return {
    services: Object.entries(services).map(([name, spec]) => ({
      name,
      props: projectServiceProps(name, project),
      spec: isMap(spec) ? spec : {},
    })),
    assumptions,
  };
}
