/**
 * Compose files -> each service judged as a `docker.Container`. The file is loaded the way `docker compose config`
 * loads it (cli/scan/compose/load.ts: every document of the file, `.env`, interpolation, `include`, `extends`,
 * `!reset`/`!override`) and each service converted by cli/scan/compose.ts.
 */
import { join as joinPath } from "node:path";
import { type Document, isMap, isScalar } from "yaml";
import { DOCKER_CONTAINER_TYPE } from "../../../policy/adapters/docker";
import { idPart } from "../../../policy/exemptions";
import type { Location } from "../../../policy/report/model";
import { pathSegments } from "../../../policy/rules/helpers";
import { COMPOSE_KEY_OF_PROP } from "../compose";
import { loadComposeServices } from "../compose/services";
import type { InputHost } from "../items";
import type { Lines } from "../lines";
import { isKubernetesObject } from "./kubernetes";
import { type FileOutput, isObj } from "./output";

/** A decoded document that Compose would load: a `services` map, and not a Kubernetes object. */
export function isComposeValue(v: unknown): boolean {
  return isObj(v) && isObj(v.services) && !isKubernetesObject(v);
}

/** A Compose file by its literal keys: a top-level `services` map and no Kubernetes `apiVersion`/`kind`. */
export function isComposeDocument(doc: Document): boolean {
  const c = doc.contents;
  if (!isMap(c)) return false;
  const keys = new Set(c.items.map((p) => (isScalar(p.key) ? String(p.key.value) : "")));
  return (
    keys.has("services") && !(keys.has("apiVersion") && keys.has("kind")) && isMap(c.get("services", true))
  );
}

/** The files whose Compose project is already loaded. */
const loaded = new WeakSet<FileOutput>();

/**
 * The Compose project of the file `source`, once per file (compose-go merges all its documents into one project);
 * `lines` locate findings at the service's keys. Standard input is read as a file in the working directory.
 */
export function readCompose(out: FileOutput, lines: Lines, source: string, host: InputHost): void {
  if (loaded.has(out)) return;
  loaded.add(out);
  const project = loadComposeServices(host.path ?? joinPath(process.cwd(), "compose.yaml"), source, host);
  if ("error" in project) {
    const e = project.error;
    const elsewhere = e.file !== undefined && e.file !== host.path;
    out.error(
      elsewhere ? undefined : e.line,
      `Compose file cannot be loaded: ${e.message}${elsewhere ? ` (in ${e.file}${e.line === undefined ? "" : `, line ${e.line}`})` : ""}`,
    );
    return;
  }
  for (const { name, props, spec } of project.services) {
    const base = ["services", name];
    const at = lines.line(base);
    // A finding on a Docker prop points at the first Compose key the service sets that writes it.
    const locate = (path: string | undefined): Location => {
      if (path === undefined) return out.loc(at);
      const [first] = pathSegments(path);
      const keys = COMPOSE_KEY_OF_PROP[String(first)] ?? [];
      const key = keys.find((k) => isObj(spec) && spec[k] !== undefined);
      return out.loc(key === undefined ? at : lines.line([...base, key]));
    };
    out.add({
      format: "compose",
      type: DOCKER_CONTAINER_TYPE,
      props,
      kind: "service",
      name,
      id: `${out.file}:service/${idPart(name)}`,
      locate,
      assumptions: project.assumptions,
    });
  }
}
