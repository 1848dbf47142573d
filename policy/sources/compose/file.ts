/**
 * Compose files -> each service judged as a `docker.Container`. The file is loaded the way `docker compose config`
 * loads it (policy/sources/compose/load.ts: every document of the file, `.env`, interpolation, `include`, `extends`,
 * `!reset`/`!override`) and each service converted by policy/sources/compose/service-props.ts.
 */
import { dirname, join as joinPath } from "node:path";
import { type Document, isMap, isScalar, isSeq, LineCounter, parseAllDocuments } from "yaml";
import { idPart } from "../../exemptions";
import type { Location } from "../../report/model";
import { pathSegments } from "../../rules/helpers";
import { isKubernetesObject } from "../kubernetes/file";
import { DOCKER_CONTAINER_TYPE } from "../pulumi/container";
import type { InputHost } from "../text/items";
import { Lines } from "../text/lines";
import { type FileOutput, isObj } from "../text/output";
import { discoverProject, type ProjectFiles } from "./discover";
import { COMPOSE_KEY_OF_PROP } from "./service-props";
import { loadComposeServices } from "./services";

/** compose-go's `include` entries: a path, or `{path, env_file, project_directory}` (the schema allows no more). */
const INCLUDE_KEYS = new Set(["path", "env_file", "project_directory"]);

function isIncludeList(v: unknown): boolean {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every(
      (e) =>
        typeof e === "string" ||
        (isObj(e) && Object.keys(e).length > 0 && Object.keys(e).every((k) => INCLUDE_KEYS.has(k))),
    )
  );
}

/**
 * A decoded document that Compose would load: a `services` map, or an `include` list (the compose-spec schema
 * requires no `services`; the included projects' services are the file's), and not a Kubernetes object.
 */
export function isComposeValue(v: unknown): boolean {
  if (!isObj(v) || isKubernetesObject(v)) return false;
  if (isObj(v.services)) return true;
  return isIncludeList(v.include) && (v.services === undefined || v.services === null);
}

/** A Compose file by its literal keys: a `services` map or an `include` list, no Kubernetes `apiVersion`/`kind`. */
export function isComposeDocument(doc: Document): boolean {
  const c = doc.contents;
  if (!isMap(c)) return false;
  const keys = new Set(c.items.map((p) => (isScalar(p.key) ? String(p.key.value) : "")));
  if (keys.has("apiVersion") && keys.has("kind")) return false;
  if (isMap(c.get("services", true))) return true;
  const inc = c.get("include", true);
  if (!isSeq(inc) || inc.items.length === 0) return false;
  const services = c.get("services", true);
  const noServices = !keys.has("services") || (isScalar(services) && services.value === null);
  return (
    noServices &&
    inc.items.every(
      (e) =>
        isScalar(e) ||
        (isMap(e) &&
          e.items.length > 0 &&
          e.items.every((p) => isScalar(p.key) && INCLUDE_KEYS.has(String(p.key.value)))),
    )
  );
}

/**
 * The project `docker compose` (no `-f`) loads in the folder of the input, when the input is one of its files
 * (compose/discover.ts): each folder is discovered once per scan.
 */
export function composeProjectOf(host: InputHost): ProjectFiles | undefined {
  const path = host.path;
  if (path === undefined) return undefined;
  const folder = dirname(path);
  const cache = host.compose?.folders;
  let found = cache?.get(folder);
  if (cache === undefined || !cache.has(folder)) {
    found = discoverProject(folder, host, host.display);
    cache?.set(folder, found);
  }
  return found?.files.includes(path) === true ? found : undefined;
}

/** The lines of the first document of `text` that has a `services` map (where a project's services are written). */
function linesOf(text: string): Lines {
  const counter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: counter, uniqueKeys: false, merge: false });
  const list = Array.isArray(docs) ? docs : [];
  const doc = list.find((d) => isMap(d.contents) && isMap(d.contents.get("services", true))) ?? list[0];
  return new Lines(doc, doc === undefined ? undefined : counter);
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
  const path = host.path ?? joinPath(process.cwd(), "compose.yaml");
  const set = composeProjectOf(host);
  let at = out;
  let where = lines;
  if (set !== undefined) {
    // One project, however many of its files the scan reads: reported once, under its first file.
    const main = set.files[0] ?? path;
    const show = host.display ?? ((p: string) => p);
    if (main !== path)
      out.skip(
        undefined,
        "compose file",
        `merged into the Compose project of ${show(main)} (${set.files.map(show).join(", ")}), judged there`,
      );
    const key = set.files.join("\n");
    if (host.compose?.reported.has(key) === true) return;
    host.compose?.reported.add(key);
    if (main !== path) {
      at = out.as(show(main));
      try {
        where = linesOf(host.readFile(main));
      } catch {
        where = new Lines(undefined, undefined);
      }
    }
  }
  readProject(at, where, path, source, host, set);
}

function readProject(
  out: FileOutput,
  lines: Lines,
  path: string,
  source: string,
  host: InputHost,
  set: ProjectFiles | undefined,
): void {
  const project = loadComposeServices(path, source, host, set);
  if ("error" in project) {
    const e = project.error;
    const elsewhere = e.file !== undefined && e.file !== (set?.files[0] ?? path);
    out.error(
      elsewhere ? undefined : e.line,
      `Compose file cannot be loaded: ${e.message}${elsewhere ? ` (in ${e.file}${e.line === undefined ? "" : `, line ${e.line}`})` : ""}`,
    );
    return;
  }
  for (const r of project.refused) out.error(lines.line(["services", r.name, "provider"]), r.message);
  for (const { name, props, spec } of project.services) {
    const base = ["services", name.split("/")[0] ?? name];
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
