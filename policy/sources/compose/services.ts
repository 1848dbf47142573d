/** A Compose file -> its loaded project's services as `docker.Container` props, or the input error that stops it. */

import { usedDefinitionFields } from "./definitions";
import type { ComposeHost } from "./environment";
import { unjudgedComposeFields } from "./fields";
import { hookViews } from "./hooks";
import { loadComposeProject, type ProjectFileSet } from "./load";
import { isMap, type Model } from "./merge";
import { networkOptionFields, projectServiceProps } from "./project";
import { ComposeError } from "./yaml";

export interface ComposeService {
  readonly name: string;
  readonly props: Record<string, unknown>;
  /** The service as loaded (long syntax), for locating findings by key. */
  readonly spec: Model;
}

export type ComposeServices =
  | {
      readonly services: readonly ComposeService[];
      readonly assumptions: readonly string[];
      /** Services no rule can judge (a `provider` runs a host program), each with why: never a pass. */
      readonly refused: readonly { readonly name: string; readonly message: string }[];
    }
  | { readonly error: ComposeError };

/**
 * Why a `provider` service cannot be judged: docker/compose (pkg/compose/plugins.go) runs the host program its
 * `type` names (a docker CLI plugin, or any program on PATH) as `<type> compose up ...`, and creates no container.
 */
function providerRefusal(name: string, spec: Model): string | undefined {
  if (spec.provider === undefined || spec.provider === null) return undefined;
  const type = isMap(spec.provider) ? spec.provider.type : undefined;
  const shown = typeof type === "string" ? `"${type}"` : JSON.stringify(type ?? null);
  return `services.${name}.provider.type is ${shown}: docker compose runs that host program (\`${typeof type === "string" ? type : "<type>"} compose up\`) instead of a container, outside every wall; no rule can judge what it does, so the service is refused`;
}

/** Loads the project of `path` (text `source`) and converts every service, profiles included. */
export function loadComposeServices(
  path: string,
  source: string,
  host: ComposeHost,
  set?: ProjectFileSet,
): ComposeServices {
  let project: Model;
  let assumptions: readonly string[];
  let workingDir: string;
  try {
    ({ model: project, assumptions, workingDir } = loadComposeProject(path, source, host, set));
  } catch (e) {
    if (e instanceof ComposeError) return { error: e };
    if (e instanceof RangeError) return { error: new ComposeError(`too deeply nested: ${e.message}`) };
    throw e;
  }
  // Jobs (compose-go's `jobs`: containers that run to completion) are containers like services, with a service's keys
  // and triggers: each is judged as the service it would be.
  const jobs = isMap(project.jobs) ? project.jobs : {};
  const kinds = new Map<string, { kind: "service" | "job"; at: string }>();
  const services: Model = {};
  for (const [name, raw] of Object.entries(isMap(project.services) ? project.services : {})) {
    services[name] = raw;
    kinds.set(name, { kind: "service", at: `services.${name}` });
  }
  for (const [name, raw] of Object.entries(jobs)) {
    const key = Object.hasOwn(services, name) ? `jobs.${name}` : name;
    services[key] = raw;
    kinds.set(key, { kind: "job", at: `jobs.${name}` });
  }
  if (Object.keys(jobs).length > 0) project = { ...project, services };
  const out: ComposeService[] = [];
  const refused: { name: string; message: string }[] = [];
  for (const [name, raw] of Object.entries(services)) {
    const spec = isMap(raw) ? raw : {};
    const why = providerRefusal(name, spec);
    if (why !== undefined) {
      refused.push({ name, message: why });
      continue;
    }
    const props = projectServiceProps(name, project);
    const { kind, at } = kinds.get(name) ?? { kind: "service" as const, at: `services.${name}` };
    const fields = [
      ...unjudgedComposeFields(spec, kind, at),
      ...networkOptionFields(name, project),
      ...usedDefinitionFields(name, spec, project),
      ...(Array.isArray(spec.pre_start) ? spec.pre_start : []).flatMap((h, i) =>
        isMap(h) ? unjudgedComposeFields(h, "pre_start_hook", `${at}.pre_start[${i}]`) : [],
      ),
    ];
    // Not a @pulumi/docker input: the Docker adapter hands these to sandbox-disallow-unjudged-fields.
    if (fields.length > 0) props.unjudgedFields = fields;
    out.push({ name, props, spec });
    for (const h of hookViews(name, spec, props, workingDir))
      out.push({ name: h.name, props: h.props, spec });
  }
  return { services: out, assumptions, refused };
}
