/** The project namespace: which names it may not take, and the Pod Security Admission labels it carries. */
import { projectLabels } from "../model";

/** The Pod Security Admission version the namespace pins (the cluster's own minor when it is older). */
export const PSA_VERSION = "v1.36";

/** Namespaces a project must never use: they belong to the cluster. */
export const RESERVED_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** Labels of the project namespace: the project's own plus Pod Security Admission `restricted`, pinned. */
export function namespaceLabels(project: string): Record<string, string> {
  return {
    ...projectLabels(project, "network"),
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": PSA_VERSION,
    "pod-security.kubernetes.io/audit": "restricted",
    "pod-security.kubernetes.io/audit-version": PSA_VERSION,
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/warn-version": PSA_VERSION,
  };
}
