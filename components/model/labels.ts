/** Label keys every object of a project carries; the off switch finds what to remove by them. */
export const LABELS = {
  project: "sandbox.project",
  template: "sandbox.template",
  role: "sandbox.role",
  managedBy: "sandbox.managed-by",
  specHash: "sandbox.spec-hash",
  egress: "sandbox.egress",
  task: "sandbox.task",
  /** The Pulumi URN of the object, set by the local Docker provider (it names the stack). */
  pulumiUrn: "sandbox.pulumi-urn",
} as const;

/** The value of `sandbox.managed-by` on everything this toolkit creates. */
export const MANAGED_BY = "sandbox-projects";

/**
 * What an object is for: the project network, a task, a template's probe, the egress proxy, the broker, a job volume,
 * the RuntimeClass a stronger runtime's pods name (Kubernetes).
 */
export type Role = "network" | "task" | "probe" | "proxy" | "broker" | "job-volume" | "runtime";

/** The labels of one object of a project, as a sorted record. */
export function projectLabels(
  project: string,
  role: Role,
  template?: string,
  specHash?: string,
): Record<string, string> {
  const labels: Record<string, string> = {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.project]: project,
    [LABELS.role]: role,
  };
  if (template !== undefined) labels[LABELS.template] = template;
  if (specHash !== undefined) labels[LABELS.specHash] = specHash;
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
