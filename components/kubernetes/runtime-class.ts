/**
 * The RuntimeClasses a project's stronger runtimes need on Kubernetes. A template with `runtime: runsc` (or `kata`)
 * names the RuntimeClass `gvisor` (or `kata`) in its pods; the node's container runtime runs them with the class's
 * handler (containerd: `plugins."io.containerd.grpc.v1.cri".containerd.runtimes.<handler>`). The project creates the
 * class unless the cluster already provides it (GKE Sandbox's `gvisor`, for one): `create: false`.
 */
import { z } from "zod";
import { type LaunchSpec, strictObject } from "../model";
import { RUNTIME_CLASSES } from "./pod";

/** The runtimes that need a RuntimeClass. */
export type SandboxedRuntime = keyof typeof RUNTIME_CLASSES;

/** A RuntimeClass handler: a DNS label, as the API server validates `handler` (node.k8s.io/v1). */
const HANDLER = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const HANDLER_RULE = "a lower-case DNS label (letters, digits and -, at most 63 characters)";

const RuntimeClassSettingSchema = strictObject({
  /** Create the RuntimeClass with the project (deleted by `destroy`). `false`: the cluster already has it. */
  create: z.boolean({ error: "create must be true or false" }).default(true),
  /** The node's runtime handler the class selects. Defaults to `runsc` for gVisor and `kata` for Kata. */
  handler: z
    .string({ error: `handler must be ${HANDLER_RULE}` })
    .max(63, { error: `handler must be ${HANDLER_RULE}` })
    .regex(HANDLER, { error: `handler must be ${HANDLER_RULE}` })
    .optional(),
});

/** `sandbox:kubernetes.runtimeClasses`: per stronger runtime, whether the project creates its class and its handler. */
export const RuntimeClassSettingsSchema = strictObject({
  runsc: RuntimeClassSettingSchema.optional(),
  kata: RuntimeClassSettingSchema.optional(),
});
export type RuntimeClassSettings = z.input<typeof RuntimeClassSettingsSchema>;

/** The handler each runtime's class selects when the config names none. */
export const DEFAULT_HANDLERS: Readonly<Record<SandboxedRuntime, string>> = { runsc: "runsc", kata: "kata" };

/** One RuntimeClass the project creates. */
export interface RuntimeClassPlan {
  readonly runtime: SandboxedRuntime;
  /** The class's name, as the pods name it. */
  readonly name: string;
  readonly handler: string;
}

/** The classes to create: one per stronger runtime some template uses, unless its setting says the cluster has it. */
export function runtimeClassPlans(
  templates: readonly Pick<LaunchSpec, "runtime">[],
  settings: RuntimeClassSettings = {},
): RuntimeClassPlan[] {
  const used = new Set<SandboxedRuntime>();
  for (const t of templates) if (t.runtime !== "runc") used.add(t.runtime);
  return [...used].sort().flatMap((runtime) => {
    const s = settings[runtime];
    if (s?.create === false) return [];
    return [{ runtime, name: RUNTIME_CLASSES[runtime], handler: s?.handler ?? DEFAULT_HANDLERS[runtime] }];
  });
}
