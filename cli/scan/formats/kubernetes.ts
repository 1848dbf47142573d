/** Kubernetes objects (YAML or JSON, `List` kinds) -> resources typed `kubernetes:<group>/<version>:<Kind>`. */
import { idPart } from "../../../policy/exemptions";
import { pathSegments } from "../../../policy/rules/helpers";
import type { Lines } from "../lines";
import { type FileOutput, isObj, text } from "./output";

/** An object the API server would take by its apiVersion and kind. */
export function isKubernetesObject(value: Record<string, unknown>): boolean {
  return typeof value.kind === "string" && value.apiVersion !== undefined;
}

/** The Pulumi Kubernetes provider's type token of an apiVersion and kind (`core` for the core group). */
function kubeType(apiVersion: string, kind: string): string {
  const i = apiVersion.lastIndexOf("/");
  const group = i < 0 ? "core" : apiVersion.slice(0, i);
  const version = i < 0 ? apiVersion : apiVersion.slice(i + 1);
  return `kubernetes:${group}/${version}:${kind}`;
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
  const apiVersion = text(value.apiVersion);
  const at = lines.line(base);
  if (apiVersion === undefined) {
    out.skip(at, kind, "no apiVersion", name);
    return;
  }
  const ns = text(meta.namespace);
  const type = kubeType(apiVersion, kind);
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
