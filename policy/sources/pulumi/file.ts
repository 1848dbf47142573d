/**
 * `pulumi preview --json` and `pulumi stack export` (or a state file's `checkpoint.latest`) -> each resource's
 * inputs under its type token, with what the stack rules need (URN, parent, dependencies, secret outputs). Values
 * are read as policy/sources/pulumi/json.ts reads them: unknowns stay unknown, secrets are sealed.
 */

import type { InputFormat, Location } from "../../report/model";
import { parseUrn } from "../../urn";
import { judgedType } from "../kubernetes/file";
import { taintCheck } from "../lenient";
import { type FileOutput, isObj, text } from "../text/output";
import { pulumiValue } from "./json";

/** A `pulumi preview --json` document: its steps. */
export function isPulumiPreview(value: Record<string, unknown>): boolean {
  return Array.isArray(value.steps);
}

/** A `pulumi stack export` document (`deployment`) or a state file (`checkpoint`). */
export function isPulumiState(value: Record<string, unknown>): boolean {
  return isObj(value.deployment) || isObj(value.checkpoint);
}

/** The resources of a preview: each step's new state. */
export function readPreview(out: FileOutput, value: Record<string, unknown>): void {
  // A step's new state: `newState` (current CLIs) or `new` (older ones). Deletes have none and are not judged.
  readResources(out, "pulumi-preview", value.steps as unknown[], (step) => {
    const s = isObj(step.newState) ? step.newState : isObj(step.new) ? step.new : undefined;
    return s === undefined ? undefined : { ...s, urn: s.urn ?? step.urn };
  });
}

/** The resources of a state: those it records, and those a pending operation may have left running. */
export function readState(out: FileOutput, value: Record<string, unknown>): void {
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
  // A resource marked `delete` is the old one of a replacement, pending deletion: it runs until the engine deletes
  // it, which an update that failed never did. It is judged like the rest.
  readResources(out, "pulumi-state", [...resources, ...pending], (r) => r);
}

/**
 * Each resource `pick` finds among `resources` (skipping the stack and providers), identified and located by its
 * URN. The file is one stack.
 */
function readResources(
  out: FileOutput,
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
    // Exemptions match the URN, read as Pulumi reads it; one that is not a URN of this type would name another.
    const parts = parseUrn(urn);
    if (parts === undefined || parts.type !== type) {
      out.error(
        undefined,
        parts === undefined
          ? `resource urn ${JSON.stringify(urn)} is not a Pulumi URN (urn:pulumi:<stack>::<project>::<type>::<name>); not judged`
          : `resource urn ${JSON.stringify(urn)} names type ${parts.type}, but the resource's type is ${type}; not judged`,
      );
      continue;
    }
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
    const location: Location = { file: out.file, urn };
    // A generic CustomResource is judged as the kind its inputs name (kubernetes/file.ts judgedType).
    out.add({
      format,
      type: judgedType(type, props),
      props,
      kind: type.slice(type.lastIndexOf(":") + 1),
      name: parts.name,
      id: urn,
      locate: () => location,
      taint: taintCheck(secretPaths),
      stack: {
        stack: out.file,
        urn,
        ...(parent === undefined ? {} : { parent }),
        propertyDependencies: deps,
        additionalSecretOutputs: secretOutputs,
        ...(typeof r.custom === "boolean" ? { custom: r.custom } : {}),
      },
    });
    // A Kubernetes object's outputs are what the API server returned: its defaults and every admission mutation.
    if (format === "pulumi-state" && type.startsWith("kubernetes:") && isObj(r.outputs)) {
      const liveSecrets: string[] = [...secretOutputs];
      const live = pulumiValue(r.outputs, "", liveSecrets);
      out.add({
        format,
        type: judgedType(type, live),
        props: live,
        kind: type.slice(type.lastIndexOf(":") + 1),
        name: parts.name,
        id: urn,
        locate: () => location,
        taint: taintCheck(liveSecrets),
        live: true,
      });
    }
  }
}
