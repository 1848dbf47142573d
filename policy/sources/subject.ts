/** One entry point: a resource's type token and props -> the views the rules judge (none: nothing to judge). */

import { isUnknown, type Subject, UNKNOWN, Unreadable } from "../workload";
import { adaptLaunchSpec, LAUNCH_TYPE } from "./docker/read";
import { crdFields } from "./kubernetes/crd-fields";
import { embeddedSubjects } from "./kubernetes/embedded-subjects";
import { CUSTOM_RESOURCE_TYPE, parseGroupVersion } from "./kubernetes/file";
import { kindReason } from "./kubernetes/kinds";
import { adaptOperatorExposure } from "./kubernetes/operator-exposure";
import { adaptIngress, adaptService, isEntryPoint, isServiceType } from "./kubernetes/service";
import { parseKubeType } from "./kubernetes/sites";
import { adaptKubernetesWorkloads } from "./kubernetes/workloads";
import { noTaint, type TaintCheck } from "./lenient";
import { adaptDockerContainer, DOCKER_CONTAINER_TYPE } from "./pulumi/container";
import { opaqueReason, unjudgedReason } from "./unjudged";

/**
 * Every view of a resource: a container, a Service, each pod a carrier runs, its entry point (a Knative Service is
 * both), or, for an object that may create workloads no adapter reads, an unjudged view that fails closed.
 */
export function adaptResources(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): Subject[] {
  if (type === DOCKER_CONTAINER_TYPE) return [adaptDockerContainer(props, name, tainted)];
  if (type === LAUNCH_TYPE) return [adaptLaunchSpec(props, name, tainted)];
  const exposure = adaptOperatorExposure(type, props, name) ?? [];
  if (isServiceType(type)) return [adaptService(type, props, name), ...exposure];
  const out: Subject[] = [...(adaptKubernetesWorkloads(type, props, name, tainted) ?? [])];
  if (isEntryPoint(type, props)) out.push(adaptIngress(type, props, name));
  out.push(...embeddedSubjects(type, props, name, tainted, adaptResources));
  // An object that makes workloads the pack cannot see whole fails closed even where it shows pods too: a chart's
  // values, a patch's template or a kustomization may carry a hardened pod as a decoy for what is really deployed.
  // A Kubernetes object fails closed by its kind too: a kind with no verdict (no pinned schema), one that changes
  // pods after they were judged, or a setting its verdict names (kinds.ts).
  const t = parseKubeType(type);
  // A StepAction names an image but runs only as a step that names it, judged there (stack/disallow-unjudged-references.ts).
  const step = t?.group === "tekton.dev" && t.kind === "StepAction";
  // A generic CustomResource still under its generic token: its apiVersion or kind cannot be read.
  const reason =
    (type === CUSTOM_RESOURCE_TYPE && !isUnknown(props) ? customResourceReason(props) : undefined) ??
    (out.length > 0 || step ? opaqueReason(type, props) : unjudgedReason(type, props)) ??
    (isUnknown(props)
      ? undefined
      : t !== undefined
        ? kindReason(t, props)
        : type.startsWith("kubernetes:")
          ? `${JSON.stringify(type.slice(type.lastIndexOf(":") + 1))} is not a kind name the API server matches (letters and digits): no kind has a verdict for it`
          : undefined);
  out.push(...exposure);
  // An operator's object whose CRD schema is pinned is judged field by field too (crd-fields.ts), its pods aside.
  const fields = t === undefined || isUnknown(props) ? undefined : crdFields(t, type, props);
  if (fields !== undefined)
    out.push({
      subject: "fields",
      origin: { backend: "kubernetes", type, kind: t?.kind ?? "", name },
      unjudgedFields: fields,
    });
  if (reason === undefined) return out;
  const kind = t?.kind ?? type.slice(type.lastIndexOf(":") + 1);
  const backend = type.startsWith("docker:") ? "docker" : "kubernetes";
  return [...out, { subject: "unjudged", origin: { backend, type, kind, name }, reason }];
}

/**
 * Why a generic CustomResource the readers could not type (kubernetes/file.ts judgedType) is not judged: the
 * object the provider sends is the kind its apiVersion and kind name, and one of them cannot be read.
 */
function customResourceReason(props: unknown): string {
  const bad = (["apiVersion", "kind"] as const).map((k) => {
    const v = typeof props === "object" && props !== null ? (props as Record<string, unknown>)[k] : undefined;
    const what =
      v === undefined
        ? "absent"
        : isUnknown(v)
          ? v === UNKNOWN
            ? "not known yet"
            : `unreadable (${v instanceof Unreadable ? v.reason : "its value cannot be read"})`
          : typeof v !== "string"
            ? "not a string"
            : k === "apiVersion" && parseGroupVersion(v) === undefined
              ? `${JSON.stringify(v)}, which has more than one "/"`
              : undefined;
    return what === undefined ? undefined : `${k} is ${what}`;
  });
  const why = bad.filter((b) => b !== undefined).join(" and ");
  return `a CustomResource is the kind its apiVersion and kind name, but ${why || "they name no kind"}: no kind has a verdict for it`;
}

/** The first view, for callers that judge one view per resource (benchmarks, the toolkit's own parity tests). */
export function adaptResource(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): Subject | undefined {
  return adaptResources(type, props, name, tainted)[0];
}
