/**
 * The resource kinds the local Docker provider serves (container.ts, network.ts, volume.ts), by type token, and
 * what the provider does the same way for each: check inputs, diff, delete. Every property a kind accepts is listed
 * by the kind; anything else fails `check` by name.
 */
import type Dockerode from "dockerode";
import { isNotFound } from "../../runtime/docker/client";
import { container } from "./container";
import type { Props, ResourceKind } from "./kind";
import { network } from "./network";
import { volume } from "./volume";

const KINDS: ReadonlyMap<string, ResourceKind> = new Map(
  [network, volume, container].map((k) => [k.type, k]),
);

/** The kind of a `@pulumi/docker` type token, or undefined when this provider does not serve it. */
export function kindOf(type: string): ResourceKind | undefined {
  return KINDS.get(type);
}

/** The pulumi-generated keys every resource may carry in its inputs. */
const META = ["__defaults"];

/**
 * The check failures of new inputs: every property the kind does not implement, named (never silently ignored),
 * then the kind's own.
 */
export function checkInputs(type: string, news: Props): { property: string; reason: string }[] {
  const kind = KINDS.get(type);
  if (kind === undefined)
    return [{ property: "", reason: `resource type ${type} is not served by this provider` }];
  const unsupported = Object.keys(news)
    .filter(
      (k) =>
        news[k] !== undefined && !kind.inputs.includes(k) && !META.includes(k) && !kind.outputs.includes(k),
    )
    .sort()
    .map((property) => ({
      property,
      reason: `property "${property}" of ${type} is not implemented by the toolkit's local Docker provider; the official pulumi-docker plugin supports it (install it, or remove the property)`,
    }));
  return [...unsupported, ...(kind.check?.(news) ?? [])];
}

/**
 * A diff: the input keys whose values differ between the old state and the new inputs (deep, order-sensitive), and
 * which of them force a replacement. Only input keys count; a name the provider chose (the new inputs have none) is
 * not a change.
 */
export function diffInputs(
  type: string,
  olds: Props,
  news: Props,
): { changed: string[]; replaces: string[] } {
  const kind = KINDS.get(type);
  const changed = (kind?.inputs ?? [])
    .filter((k) => !(k === "name" && news.name === undefined))
    .filter((k) => JSON.stringify(olds[k] ?? null) !== JSON.stringify(news[k] ?? null))
    .sort();
  const replaces = changed.filter((k) => !(kind?.inPlace ?? []).includes(k));
  return { changed, replaces };
}

/**
 * The outputs after an in-place update: the diff sends only changes of the kind's `inPlace` inputs (settings Pulumi
 * keeps, which the engine never sees) to an update, so the object is untouched and its outputs are the old ones with
 * those settings taken from the new inputs (one the new inputs leave out is dropped).
 */
export function updatedOutputs(type: string, olds: Props, news: Props): Props {
  const outs: Props = { ...olds };
  for (const k of KINDS.get(type)?.inPlace ?? []) {
    if (news[k] === undefined) delete outs[k];
    else outs[k] = news[k];
  }
  return outs;
}

/** Deletes an object of any kind; one that is already gone is not an error. */
export async function deleteResource(docker: Dockerode, type: string, id: string): Promise<void> {
  try {
    await KINDS.get(type)?.remove(docker, id);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
