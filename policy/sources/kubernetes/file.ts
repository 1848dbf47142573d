/** Kubernetes objects (YAML or JSON, `List` kinds) -> resources typed `kubernetes:<group>/<version>:<Kind>`. */
import { idPart } from "../../exemptions";
import { pathSegments } from "../../rules/helpers";
import type { Lines } from "../text/lines";
import { type FileOutput, isObj, text } from "../text/output";

/** An object the API server would take by its apiVersion and kind. */
export function isKubernetesObject(value: Record<string, unknown>): boolean {
  return typeof value.kind === "string" && value.apiVersion !== undefined;
}

/**
 * apimachinery's `schema.ParseGroupVersion`, which kubectl (`Unstructured.GroupVersionKind`) and the API server
 * (`SimpleMetaFactory.Interpret`) read an apiVersion with: `""` and `"/"` are no group and no version, no `/` is a
 * version of the core group, one `/` splits group and version (`/v1` is core v1, `apps/` is apps with no version);
 * more than one `/` is refused (undefined).
 */
export function parseGroupVersion(apiVersion: string): { group: string; version: string } | undefined {
  if (apiVersion === "" || apiVersion === "/") return { group: "", version: "" };
  const i = apiVersion.indexOf("/");
  if (i < 0) return { group: "", version: apiVersion };
  if (apiVersion.indexOf("/", i + 1) >= 0) return undefined;
  return { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/**
 * The Pulumi Kubernetes provider's type token of a group, version and kind (`core` for the core group). Without a
 * version, kubectl maps the kind in any version its group serves and the API server takes the body at the version
 * of the URL it was sent to (the group's preferred one); the rules read kinds by group, so it is written `v1`.
 */
function kubeType(gv: { group: string; version: string }, kind: string): string {
  return `kubernetes:${gv.group === "" ? "core" : gv.group}/${gv.version === "" ? "v1" : gv.version}:${kind}`;
}

/** The Pulumi Kubernetes provider's generic custom resource (`new k8s.apiextensions.CustomResource` in some SDKs). */
export const CUSTOM_RESOURCE_TYPE = "kubernetes:apiextensions.k8s.io:CustomResource";

/**
 * The type token a resource is judged as. The provider sends a generic `CustomResource` as the object its
 * `apiVersion` and `kind` inputs name (its token says nothing about the kind), so it is judged as that kind, as the
 * same object in YAML or under its own token is. An apiVersion or kind that is not a plain string (not known yet, a
 * secret, the wrong shape) or an apiVersion with more than one `/` leaves the generic token, which has no verdict
 * and fails closed. Every other type is its own.
 */
export function judgedType(type: string, props: unknown): string {
  if (type !== CUSTOM_RESOURCE_TYPE || !isObj(props)) return type;
  const { apiVersion, kind } = props;
  if (typeof apiVersion !== "string" || typeof kind !== "string") return type;
  const gv = parseGroupVersion(apiVersion);
  return gv === undefined ? type : kubeType(gv, kind);
}

/**
 * One object with a string `kind` at key path `base` (a `List` is read item by item before this); an object
 * without an apiVersion is skipped. Its id is `<file>:<Kind>/<name>` (`<file>:<Kind>/<namespace>/<name>`), each
 * part written with `idPart` (policy/exemptions.ts), so a name holding `:` or `/` cannot pass for another kind or
 * namespace. An object with only a `generateName` gets its name from the API server (`<generateName>` and five
 * random characters): its id's name is `<generateName>*`, which only a pattern with a `*` there matches.
 */
export function readKubernetes(
  out: FileOutput,
  value: Record<string, unknown>,
  lines: Lines,
  base: readonly (string | number)[],
  index: number,
): void {
  const kind = value.kind as string;
  const meta = isObj(value.metadata) ? value.metadata : {};
  const given = text(meta.name);
  const generated = given === undefined ? text(meta.generateName) : undefined;
  const name = given ?? generated ?? `${kind}#${index + 1}`;
  const idName =
    given !== undefined
      ? idPart(given)
      : generated !== undefined
        ? `${idPart(generated)}*`
        : `${idPart(kind)}#${index + 1}`;
  const at = lines.line(base);
  if (typeof value.apiVersion !== "string") {
    out.skip(
      at,
      kind,
      value.apiVersion === undefined || value.apiVersion === null
        ? "no apiVersion"
        : "apiVersion is not a string",
      name,
    );
    return;
  }
  const gv = parseGroupVersion(value.apiVersion);
  if (gv === undefined) {
    out.error(
      lines.line([...base, "apiVersion"]) ?? at,
      `apiVersion "${value.apiVersion}" of ${kind}/${name} has more than one "/": kubectl and the API server refuse it (unexpected GroupVersion string)`,
    );
    return;
  }
  const ns = text(meta.namespace);
  const type = kubeType(gv, kind);
  out.add({
    format: "kubernetes",
    type,
    props: value,
    kind,
    name,
    id: `${out.file}:${idPart(kind)}/${ns === undefined ? "" : `${idPart(ns)}/`}${idName}`,
    locate: (path) => out.loc(path === undefined ? at : lines.line([...base, ...pathSegments(path)])),
  });
}
