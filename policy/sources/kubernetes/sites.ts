/** The vocabulary of the Kubernetes reader: a type token split into its parts, and one pod an object runs. */

import type { UnreadablePart, Val } from "../../workload";

/** A Pulumi Kubernetes type token split into group, version and Kind. */
export interface KubeType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** Parses `kubernetes:<group>/<version>:<Kind>` (`kubernetes:core/v1:Pod`, `kubernetes:apps/v1beta2:DaemonSet`). */
export function parseKubeType(type: string): KubeType | undefined {
  const m = /^kubernetes:([^:/]+)\/([^:/]+):([A-Za-z0-9]+)$/.exec(type);
  if (m === null) return undefined;
  return { group: m[1] ?? "", version: m[2] ?? "", kind: m[3] ?? "" };
}

/** Maps display paths of a rebuilt pod spec back to where each part is written in the resource. */
export type PathMap = (path: string) => string;

/** One pod an object will run, and how to read it. */
export interface PodSite {
  /** The object the paths below are relative to: the resource, or a pod rebuilt from a custom resource. */
  readonly props: unknown;
  /** Path of the pod spec (`spec.template.spec`). */
  readonly specPath: string;
  /** Path of the pod template's metadata, when there is one. */
  readonly metaPath?: string;
  /** Path of the Job spec, for Job-like carriers. */
  readonly jobPath?: string;
  readonly replicasPath?: string;
  /** Copies the reader counted itself (a KEDA ScaledJob: its most Jobs times their parallelism), over replicasPath. */
  readonly replicas?: Val<number>;
  /** True when the carrier restarts pods by design (the restart policy is not a choice). */
  readonly controller: boolean;
  /** True when an absent restartPolicy means Always (a bare Pod). */
  readonly defaultAlways: boolean;
  /** Where the pod sits in the resource, to name it when the resource has several. */
  readonly where: string;
  /** For a rebuilt pod: its paths -> the resource's paths. */
  readonly remap?: PathMap;
  /** Parts present but unreadable (a pod spec patch that does not parse): the rules fail closed on them. */
  readonly unreadable?: readonly UnreadablePart[];
  /** A KubeVirt VM: no container of its own; its host disks and devices are what the rules judge. */
  readonly vm?: boolean;
  /** Host devices handed to a VM, as short descriptions. */
  readonly devices?: readonly string[];
}
