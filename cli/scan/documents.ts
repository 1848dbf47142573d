/**
 * Input files -> the resources the rules judge, each with a type token, plain props and a way to turn a finding's
 * resource path into a file and line. Reads Kubernetes YAML (multi-document, `List` kinds), Compose files, the JSON
 * of `pulumi preview --json` and `pulumi stack export`, the runtime's launch spec (`sandbox.launch/v1`) and a Docker
 * Engine API create body. Anything else is skipped with a reason; a file that does not parse is an error with its
 * line.
 */
import { join as joinPath } from "node:path";
import {
  type Document,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Node as YamlNode,
} from "yaml";
import { hardenedContainerArgs } from "../../components/docker/containerArgs";
import { type LaunchSpec, PER_TASK_NETWORK, taskNetworkName } from "../../components/spec/launch";
import { DOCKER_CONTAINER_TYPE } from "../../policy/adapters/docker";
import { LAUNCH_TYPE } from "../../policy/adapters/launch";
import { noTaint, REDACTED_SECRET, type TaintCheck, taintCheck } from "../../policy/adapters/read";
import type { InputError, InputFormat, Location, ResourceRef, Skipped } from "../../policy/report/model";
import { pathSegments } from "../../policy/rules/helpers";
import { UNKNOWN } from "../../policy/workload";
import { containerCreateBody, type PlainContainerArgs } from "../../runtime/docker/createBody";
import { COMPOSE_KEY_OF_PROP, composeServiceToContainerProps } from "./compose";

/** The engine's unknown value on the wire (plugin.UnknownStringValue), as `pulumi preview --json` prints it. */
export const PULUMI_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The key that marks a Pulumi secret object (`{ "4dabf...": "1b47...", "ciphertext" | "plaintext": ... }`). */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** What a Pulumi document says about a resource beyond its props, for the stack rules. */
export interface StackInfo {
  /** One stack per input file. */
  readonly stack: string;
  readonly urn: string;
  readonly parent?: string;
  readonly propertyDependencies: Readonly<Record<string, readonly string[]>>;
  readonly additionalSecretOutputs: readonly string[];
}

/** One resource to judge. */
export interface ScanItem {
  readonly type: string;
  readonly props: unknown;
  readonly name: string;
  readonly resource: ResourceRef;
  readonly taint: TaintCheck;
  /** Where a finding at a resource path (`spec.containers[0].securityContext`) points. */
  readonly locate: (path: string | undefined) => Location;
  readonly stack?: StackInfo;
}

export interface Parsed {
  readonly items: ScanItem[];
  readonly skipped: Skipped[];
  readonly errors: InputError[];
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function text(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Lines of one YAML (or JSON) document, looked up by key path; best effort, never throws. */
class Lines {
  constructor(
    private readonly doc: Document | undefined,
    private readonly counter: LineCounter | undefined,
  ) {}

  /** The line of the deepest node of `segments` that exists (a key's own line for map entries). */
  line(segments: readonly (string | number)[]): number | undefined {
    if (this.doc === undefined || this.counter === undefined) return undefined;
    let node: unknown = this.doc.contents;
    let offset = (node as YamlNode | null)?.range?.[0];
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg),
        );
        if (pair === undefined) break;
        offset = (pair.key as YamlNode).range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg];
        if (item === undefined) break;
        offset = (item as YamlNode).range?.[0] ?? offset;
        node = item;
      } else break;
    }
    return offset === undefined ? undefined : this.counter.linePos(offset).line;
  }
}

function kubeType(apiVersion: string, kind: string): string {
  const i = apiVersion.lastIndexOf("/");
  const group = i < 0 ? "core" : apiVersion.slice(0, i);
  const version = i < 0 ? apiVersion : apiVersion.slice(i + 1);
  return `kubernetes:${group}/${version}:${kind}`;
}

/** The name of the runtime's launch spec format (`components/spec/launch.ts`). */
const LAUNCH_SPEC_KIND = "sandbox.launch/v1";

const NOT_A_RESOURCE =
  "not a Kubernetes object, Compose file, Pulumi preview or stack export, launch spec or Engine API create body";

/** Builds resources from one parsed document of a file. */
class DocumentReader {
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
    if (Array.isArray(value.steps)) this.preview(value);
    else if (isObj(value.deployment) || isObj(value.checkpoint)) this.state(value);
    else if (value.kind === LAUNCH_SPEC_KIND) this.launchSpec(value, lines, base);
    else if (value.kind === undefined && (isObj(value.HostConfig) || typeof value.Image === "string"))
      this.createBody(value, lines, base, index);
    else if (value.kind === undefined && value.apiVersion === undefined && isObj(value.services))
      this.compose(value, lines, base);
    else if (typeof value.kind === "string") this.kubernetes(value, lines, base, index);
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

  private compose(value: Record<string, unknown>, lines: Lines, base: readonly (string | number)[]): void {
    for (const [service, spec] of Object.entries(value.services as Record<string, unknown>)) {
      const sBase = [...base, "services", service];
      const at = lines.line(sBase);
      const props = composeServiceToContainerProps(service, spec);
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
    }
  }

  private launchSpec(value: Record<string, unknown>, lines: Lines, base: readonly (string | number)[]): void {
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
    const labels = isObj(value.Labels) ? value.Labels : {};
    const name = text(value.name) ?? text(labels["sandbox.template"]) ?? `container#${index + 1}`;
    this.item(
      "engine-create-body",
      LAUNCH_TYPE,
      value,
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
    this.pulumi("pulumi-state", Array.isArray(d.resources) ? d.resources : [], (r) =>
      r.delete === true ? undefined : r,
    );
  }
}

function childPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

/**
 * A secret in a task's environment as the pack's secret-env remediation leaves it at preview (policy/pulumi/props.ts
 * `redactionEdits`): a Docker `NAME=value` entry becomes `NAME=<marker>`, a Kubernetes `env[i].value` the marker.
 * Other secrets keep their value (the pack's validation sees plain values) and stay marked as secret.
 */
function redactEnv(path: string, plain: unknown): unknown {
  if (/^(?:envs|Env)\[\d+\]$/.test(path)) {
    const m = typeof plain === "string" ? /^([^=]+)=/.exec(plain) : null;
    return m === null || plain === REDACTED_SECRET ? REDACTED_SECRET : `${m[1]}=${REDACTED_SECRET}`;
  }
  if (/(?:^|\.)env\[\d+\]\.value$/.test(path)) return REDACTED_SECRET;
  return plain;
}

/**
 * A Pulumi JSON value as the adapters read it: the engine's unknown as UNKNOWN; a secret (`{4dabf...: ...}` in a
 * state, `"[secret]"` in a preview) as its plain text when the document shows it, else the pack's redaction marker,
 * with its path recorded so the rules see it as a Pulumi secret (what the pack's remediation does at preview).
 */
function pulumiValue(v: unknown, path: string, secretPaths: string[]): unknown {
  if (v === PULUMI_UNKNOWN) return UNKNOWN;
  if (v === "[secret]") {
    secretPaths.push(path);
    return REDACTED_SECRET;
  }
  if (Array.isArray(v)) return v.map((x, i) => pulumiValue(x, childPath(path, i), secretPaths));
  if (isObj(v)) {
    if (SECRET_SIG in v) {
      secretPaths.push(path);
      let plain: unknown = REDACTED_SECRET;
      if (typeof v.plaintext === "string") {
        try {
          plain = pulumiValue(JSON.parse(v.plaintext), path, []);
        } catch {
          plain = v.plaintext;
        }
      } else if ("value" in v) plain = pulumiValue(v.value, path, []);
      return redactEnv(path, plain);
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = pulumiValue(x, childPath(path, k), secretPaths);
    return out;
  }
  return v;
}

/** The 1-based line of a character offset. */
function lineAt(src: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < src.length; i++) if (src.charCodeAt(i) === 10) line++;
  return line;
}

/** Reads one input. `file` is the name to report; `source` its text. */
export function parseInput(file: string, source: string): Parsed {
  const out: Parsed = { items: [], skipped: [], errors: [] };
  const reader = new DocumentReader(file, out);
  const trimmed = source.trimStart();
  if (file.endsWith(".json") || trimmed.startsWith("{") || trimmed.startsWith("[")) {
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (e) {
      if (file.endsWith(".json")) {
        const message = e instanceof Error ? e.message : String(e);
        const pos = /position (\d+)/.exec(message);
        const lm = /line (\d+)/.exec(message);
        const line = lm !== null ? Number(lm[1]) : pos !== null ? lineAt(source, Number(pos[1])) : undefined;
        out.errors.push({
          location: line === undefined ? { file } : { file, line },
          message: `not valid JSON: ${message}`,
        });
        return out;
      }
      value = undefined; // YAML flow syntax: read below
    }
    if (value !== undefined) {
      const pulumiDoc = isObj(value) && (Array.isArray(value.steps) || isObj(value.deployment));
      if (pulumiDoc || source.length > 5_000_000) {
        reader.read(value, new Lines(undefined, undefined), [], 0);
        return out;
      }
      // JSON is YAML: read it again for lines (manifests, launch specs).
    }
  }
  const counter = new LineCounter();
  const docs = parseAllDocuments(source, { lineCounter: counter, merge: true, prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [];
  list.forEach((doc, i) => {
    if (doc.errors.length > 0) {
      for (const err of doc.errors) {
        const line = err.linePos?.[0]?.line;
        out.errors.push({
          location: line === undefined ? { file } : { file, line },
          message: `not valid YAML: ${(err.message.split("\n")[0] ?? "").replace(/:$/, "")}`,
        });
      }
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (e) {
      const line =
        doc.contents?.range?.[0] === undefined ? undefined : counter.linePos(doc.contents.range[0]).line;
      out.errors.push({
        location: line === undefined ? { file } : { file, line },
        message: `not valid YAML: ${e instanceof Error ? e.message : String(e)}`,
      });
      return;
    }
    reader.read(value, new Lines(doc, counter), [], i);
  });
  return out;
}
