/**
 * One parsed document -> the resources the rules judge: each document is judged as every format whose engine would
 * take it (Kubernetes objects, Pulumi previews and state files, the runtime's launch spec, Docker Engine API create
 * bodies, Compose files loaded through cli/scan/compose/).
 */
import { join as joinPath } from "node:path";
import type { Document } from "yaml";
import { hardenedContainerArgs } from "../../components/docker/containerArgs";
import { type LaunchSpec, PER_TASK_NETWORK, taskNetworkName } from "../../components/model";
import { DOCKER_CONTAINER_TYPE } from "../../policy/adapters/docker";
import { engineBody, engineBodyOf, foldKey, fromYaml } from "../../policy/adapters/engine-json";
import { LAUNCH_TYPE } from "../../policy/adapters/launch";
import { noTaint, type TaintCheck, taintCheck } from "../../policy/adapters/read";
import type { InputFormat, Location } from "../../policy/report/model";
import { pathSegments } from "../../policy/rules/helpers";
import { containerCreateBody, type PlainContainerArgs } from "../../runtime/docker/createBody";
import { COMPOSE_KEY_OF_PROP } from "./compose";
import { loadComposeServices } from "./compose/services";
import type { InputHost, Parsed, StackInfo } from "./items";
import type { Lines } from "./lines";
import { pulumiValue } from "./pulumi-json";

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function text(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function kubeType(apiVersion: string, kind: string): string {
  const i = apiVersion.lastIndexOf("/");
  const group = i < 0 ? "core" : apiVersion.slice(0, i);
  const version = i < 0 ? apiVersion : apiVersion.slice(i + 1);
  return `kubernetes:${group}/${version}:${kind}`;
}

/**
 * A Docker Engine API create body: the Engine matches its fields case-insensitively (Go's encoding/json), so
 * `hostconfig` and `IMAGE` are the same fields as `HostConfig` and `Image`.
 */
export function isEngineBody(value: Record<string, unknown>): boolean {
  return hasEngineField(value, "hostconfig") || hasEngineField(value, "image");
}

/** True when the object has the Engine API field `name` (lower case) in any spelling the daemon matches. */
function hasEngineField(value: Record<string, unknown>, name: string): boolean {
  return Object.keys(value).some((k) => foldKey(k) === name.toUpperCase());
}

/** The name of the runtime's launch spec format (`components/model/launch.ts`). */
const LAUNCH_SPEC_KIND = "sandbox.launch/v1";

const NOT_A_RESOURCE =
  "not a Kubernetes object, Compose file, Pulumi preview or stack export, launch spec or Engine API create body";

/** The inputs whose Compose project is already loaded (compose-go loads every document of a file as one). */
const composeLoaded = new WeakSet<Parsed>();

/** Builds resources from one parsed document of a file. */
export class DocumentReader {
  constructor(
    private readonly file: string,
    private readonly out: Parsed,
  ) {}

  private loc(line: number | undefined): Location {
    return line === undefined ? { file: this.file } : { file: this.file, line };
  }

  read(value: unknown, lines: Lines, base: readonly (string | number)[], index: number): void {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        this.read(v, lines, [...base, i], i);
      });
      return;
    }
    const at = lines.line(base);
    if (!isObj(value)) {
      this.out.skipped.push({ location: this.loc(at), kind: typeof value, reason: NOT_A_RESOURCE });
      return;
    }
    // Format detection never hides an object: a document is judged as every format whose engine would take it.
    // The Docker daemon ignores keys it does not know, so a body that also carries `kind`, `apiVersion`, `steps` or
    // `deployment` still runs as a body; a Kubernetes object is its apiVersion and kind whatever else it carries.
    const launch = value.kind === LAUNCH_SPEC_KIND;
    const kube = !launch && typeof value.kind === "string" && value.apiVersion !== undefined;
    const preview = Array.isArray(value.steps);
    const state = isObj(value.deployment) || isObj(value.checkpoint);
    // A Kubernetes custom resource or a launch spec may have a top-level `image`: only a HostConfig makes it a body.
    const body = kube || launch ? hasEngineField(value, "hostconfig") : isEngineBody(value);
    if (launch) this.launchSpec(value, lines, base, body);
    if (kube) this.kubernetes(value, lines, base, index);
    if (preview) this.preview(value);
    if (state) this.state(value);
    if (body) this.createBody(value, lines, base, index);
    if (launch || kube || preview || state || body) return;
    if (typeof value.kind === "string") this.kubernetes(value, lines, base, index);
    else this.out.skipped.push({ location: this.loc(at), kind: "unknown", reason: NOT_A_RESOURCE });
  }

  private item(
    format: InputFormat,
    type: string,
    props: unknown,
    kind: string,
    name: string,
    id: string,
    locate: (path: string | undefined) => Location,
    extra: { taint?: TaintCheck; stack?: StackInfo; urn?: string } = {},
  ): void {
    const location = locate(undefined);
    this.out.items.push({
      type,
      props,
      name,
      resource: { id, kind, name, type, format, location },
      taint: extra.taint ?? noTaint,
      locate,
      ...(extra.stack === undefined ? {} : { stack: extra.stack }),
    });
  }

  private kubernetes(
    value: Record<string, unknown>,
    lines: Lines,
    base: readonly (string | number)[],
    index: number,
  ): void {
    const kind = value.kind as string;
    if (kind.endsWith("List") && Array.isArray(value.items)) {
      value.items.forEach((v, i) => {
        this.read(v, lines, [...base, "items", i], i);
      });
      return;
    }
    const meta = isObj(value.metadata) ? value.metadata : {};
    const name = text(meta.name) ?? text(meta.generateName) ?? `${kind}#${index + 1}`;
    const apiVersion = text(value.apiVersion);
    const at = lines.line(base);
    if (apiVersion === undefined) {
      this.out.skipped.push({ location: this.loc(at), kind, name, reason: "no apiVersion" });
      return;
    }
    const ns = text(meta.namespace);
    const id = `${this.file}:${kind}/${ns === undefined ? "" : `${ns}/`}${name}`;
    this.item("kubernetes", kubeType(apiVersion, kind), value, kind, name, id, (path) =>
      this.loc(path === undefined ? at : lines.line([...base, ...pathSegments(path)])),
    );
  }

  /**
   * A Compose file, loaded the way `docker compose config` loads it (cli/scan/compose/load.ts: every document of the
   * file, `.env`, interpolation, `include`, `extends`, `!reset`/`!override`), each service judged as a container.
   * Standard input is read as a file in the working directory. Runs once per file: compose-go merges all documents.
   */
  compose(
    _doc: Document,
    lines: Lines,
    base: readonly (string | number)[],
    host: InputHost,
    source = String(_doc),
  ): void {
    if (composeLoaded.has(this.out)) return;
    composeLoaded.add(this.out);
    const loaded = loadComposeServices(host.path ?? joinPath(process.cwd(), "compose.yaml"), source, host);
    if ("error" in loaded) {
      const e = loaded.error;
      const line = e.file === undefined || e.file === host.path ? e.line : undefined;
      this.out.errors.push({
        location: line === undefined ? this.loc(undefined) : this.loc(line),
        message: `Compose file cannot be loaded: ${e.message}${e.file !== undefined && e.file !== host.path ? ` (in ${e.file}${e.line === undefined ? "" : `, line ${e.line}`})` : ""}`,
      });
      return;
    }
    for (const { name: service, props, spec } of loaded.services) {
      const sBase = [...base, "services", service];
      const at = lines.line(sBase);
      const locate = (path: string | undefined): Location => {
        if (path === undefined) return this.loc(at);
        const [first] = pathSegments(path);
        const keys = COMPOSE_KEY_OF_PROP[String(first)] ?? [];
        const key = keys.find((k) => isObj(spec) && spec[k] !== undefined);
        return this.loc(key === undefined ? at : lines.line([...sBase, key]));
      };
      this.item(
        "compose",
        DOCKER_CONTAINER_TYPE,
        props,
        "service",
        service,
        `${this.file}:service/${service}`,
        locate,
      );
      const last = this.out.items.pop();
      if (last !== undefined) this.out.items.push({ ...last, assumptions: loaded.assumptions });
    }
  }

  /** `alsoBody`: the document is judged as an Engine API body too, so a spec it cannot be is not an error. */
  private launchSpec(
    value: Record<string, unknown>,
    lines: Lines,
    base: readonly (string | number)[],
    alsoBody = false,
  ): void {
    const at = lines.line(base);
    const spec = value as unknown as LaunchSpec;
    const name = `${text(value.project) ?? "project"}/${text(value.template) ?? "template"}`;
    let body: unknown;
    try {
      // Exactly what the launcher sends for a task of this template (runtime/launcher.ts, runtime/preflight.ts).
      const hostRoot = isObj(value.jobFolder) ? (text(value.jobFolder.hostRoot) ?? "/") : "/";
      // A proxy-mode template gets a network of its own per task; the launcher names it after the task.
      const network = spec.network === PER_TASK_NETWORK ? taskNetworkName(spec.project, "task") : undefined;
      const args = hardenedContainerArgs(
        spec,
        { type: "bind", source: joinPath(hostRoot, "task") },
        network === undefined ? {} : { network },
      );
      const pids = isObj(value.resources) ? value.resources.pids : undefined;
      body = containerCreateBody(
        args as PlainContainerArgs,
        typeof pids === "number" ? { pidsLimit: pids } : {},
      );
    } catch (e) {
      if (alsoBody) return;
      this.out.errors.push({
        location: this.loc(at),
        message: `launch spec ${name} cannot be read: ${e instanceof Error ? e.message : String(e)}`,
      });
      return;
    }
    this.item("launch-spec", LAUNCH_TYPE, body, "launch", name, `${this.file}:launch/${name}`, () =>
      this.loc(at),
    );
  }

  private createBody(
    value: Record<string, unknown>,
    lines: Lines,
    base: readonly (string | number)[],
    index: number,
  ): void {
    const at = lines.line(base);
    // The body as the daemon decodes it (policy/adapters/engine-json.ts): from the document tree when there is one,
    // where repeated keys keep their order, else from the value.
    const node = lines.node(base);
    const body = node === undefined ? engineBodyOf(value) : engineBody(fromYaml(node));
    const decoded = isObj(body) ? body : {};
    const labels = isObj(decoded.Labels) ? decoded.Labels : {};
    const name = text(value.name) ?? text(labels["sandbox.template"]) ?? `container#${index + 1}`;
    this.item(
      "engine-create-body",
      LAUNCH_TYPE,
      body,
      "launch",
      name,
      `${this.file}:launch/${name}`,
      (path) => this.loc(path === undefined ? at : lines.line([...base, ...pathSegments(path)])),
    );
  }

  private pulumi(
    format: InputFormat,
    resources: readonly unknown[],
    pick: (r: Record<string, unknown>) => Record<string, unknown> | undefined,
  ): void {
    for (const raw of resources) {
      if (!isObj(raw)) continue;
      const r = pick(raw);
      if (r === undefined) continue;
      const type = text(r.type);
      const urn = text(r.urn) ?? text(raw.urn);
      if (type === undefined || urn === undefined) continue;
      if (type === "pulumi:pulumi:Stack" || type.startsWith("pulumi:providers:")) continue;
      const name = urn.slice(urn.lastIndexOf("::") + 2);
      const secretPaths: string[] = [];
      const props = pulumiValue(r.inputs ?? {}, "", secretPaths);
      const deps: Record<string, string[]> = {};
      if (isObj(r.propertyDependencies))
        for (const [k, v] of Object.entries(r.propertyDependencies))
          deps[k] = Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
      const secretOutputs = Array.isArray(r.additionalSecretOutputs)
        ? r.additionalSecretOutputs.filter((x): x is string => typeof x === "string")
        : [];
      secretPaths.push(...secretOutputs);
      const parent = text(r.parent);
      const location: Location = { file: this.file, urn };
      this.item(format, type, props, type.slice(type.lastIndexOf(":") + 1), name, urn, () => location, {
        taint: taintCheck(secretPaths),
        stack: {
          stack: this.file,
          urn,
          ...(parent === undefined ? {} : { parent }),
          propertyDependencies: deps,
          additionalSecretOutputs: secretOutputs,
          ...(typeof r.custom === "boolean" ? { custom: r.custom } : {}),
        },
      });
    }
  }

  private preview(value: Record<string, unknown>): void {
    // A step's new state: `newState` (current CLIs) or `new` (older ones). Deletes have none and are not judged.
    this.pulumi("pulumi-preview", value.steps as unknown[], (step) => {
      const s = isObj(step.newState) ? step.newState : isObj(step.new) ? step.new : undefined;
      return s === undefined ? undefined : { ...s, urn: s.urn ?? step.urn };
    });
  }

  private state(value: Record<string, unknown>): void {
    const d = isObj(value.deployment)
      ? value.deployment
      : isObj(value.checkpoint) && isObj(value.checkpoint.latest)
        ? value.checkpoint.latest
        : {};
    // An operation an interrupted update left pending (`creating`, `updating`) may have left its object running.
    const resources = Array.isArray(d.resources) ? d.resources : [];
    const known = new Set(resources.map((r) => (isObj(r) ? r.urn : undefined)));
    const pending = (Array.isArray(d.pending_operations) ? d.pending_operations : [])
      .map((op) => (isObj(op) && op.type !== "deleting" && isObj(op.resource) ? op.resource : undefined))
      .filter((r): r is Record<string, unknown> => r !== undefined && !known.has(r.urn));
    this.pulumi("pulumi-state", [...resources, ...pending], (r) => (r.delete === true ? undefined : r));
  }
}
