import { z } from "zod";
import { DropSetSchema, resolveDropSet } from "./capabilities";
import { EgressSchema } from "./egress";
import { REDACT, strictObject } from "./errors";
import { secretEnvReason } from "./secrets/env";
import { UserSchema } from "./user";

const wholeNumber = (what: string, min: number, max: number, dflt: number) => {
  const msg = `${what} must be a whole number between ${min} and ${max}`;
  return z
    .number({ error: msg })
    .int({ error: msg })
    .min(min, { error: msg })
    .max(max, { error: msg })
    .default(dflt);
};

/** What one task may use: the limits every container of the template gets. */
export const ResourcesSchema = strictObject({
  /** vCPUs (fractions allowed). Defaults to 1. */
  vcpu: z
    .number({ error: "vcpu must be a number of vCPUs between 0.01 and 64" })
    .min(0.01, { error: "vcpu must be a number of vCPUs between 0.01 and 64" })
    .max(64, { error: "vcpu must be a number of vCPUs between 0.01 and 64" })
    .default(1),
  /** Memory limit in MB; swap is not allowed on top. Defaults to 512. */
  memoryMb: wholeNumber("memoryMb (megabytes)", 16, 262_144, 512),
  /** Process limit (`pids.max`): what stops a fork bomb. Defaults to 128. */
  pids: wholeNumber("pids", 8, 32_768, 128),
  /** Size of the writable `/tmp` in MB (it counts against memory). Defaults to 64. */
  tmpfsMb: wholeNumber("tmpfsMb (megabytes)", 1, 65_536, 64),
  /** Ephemeral disk for the job folder in MB, where the backend can enforce it. Defaults to 1024. */
  diskMb: wholeNumber("diskMb (megabytes)", 16, 1_048_576, 1024),
}).superRefine((r, ctx) => {
  // Judged only against a valid memory limit; an invalid one has its own message.
  const memoryValid = Number.isInteger(r.memoryMb) && r.memoryMb >= 16 && r.memoryMb <= 262_144;
  if (memoryValid && r.tmpfsMb > r.memoryMb) {
    ctx.addIssue({
      code: "custom",
      path: ["tmpfsMb"],
      message: `tmpfsMb must not exceed memoryMb (${r.memoryMb}): /tmp is memory`,
    });
  }
});
export type Resources = z.output<typeof ResourcesSchema>;

/**
 * Pre-started members kept ready for the template's launches (on Docker, by a long-lived launcher: `sandbox serve`,
 * or a library `Launcher` given a `WarmPool`). A member is started ahead of time behind a gate that runs no task code
 * and serves exactly one task; while it waits it holds one of the budget's slots and is charged to the project.
 */
export const PoolSchema = strictObject({
  /** Members kept waiting: a whole number from 1, and at most the budget's concurrency over all templates. */
  size: z
    .number({ error: "pool.size must be a whole number between 1 and 1000" })
    .int({ error: "pool.size must be a whole number between 1 and 1000" })
    .min(1, { error: "pool.size must be a whole number between 1 and 1000" })
    .max(1000, { error: "pool.size must be a whole number between 1 and 1000" }),
  /** Seconds a member may wait before it is replaced by a fresh one. Defaults to 600. */
  maxIdleSeconds: wholeNumber("pool.maxIdleSeconds", 10, 86_400, 600),
});
export type Pool = z.output<typeof PoolSchema>;

/** Folders a job folder may never be mounted over: the image's own system folders and the kernel's views. */
const SYSTEM_FOLDERS = [
  "/",
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/usr",
  "/etc",
  "/proc",
  "/sys",
  "/dev",
  "/boot",
  "/run",
  "/var/run",
  "/root",
  "/tmp",
];

const absolutePath = z
  .string({ error: "must be an absolute path such as /job" })
  .regex(/^\/[^\0]*$/, { error: "must be an absolute path such as /job", abort: true })
  .refine((p) => !p.split("/").includes(".."), { error: "must not contain .. segments" });

/** The one writable folder a task gets, where its inputs and outputs live. */
export const JobFolderSchema = strictObject({
  /** Where the job folder appears inside the container. Defaults to `/job`. */
  containerPath: absolutePath
    .refine((p) => !SYSTEM_FOLDERS.includes(p.replace(/\/+$/, "") || "/"), {
      error: `must not be a system folder (${SYSTEM_FOLDERS.join(", ")})`,
    })
    .default("/job"),
});
export type JobFolder = z.output<typeof JobFolderSchema>;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables the toolkit owns: a template that sets them could route around the proxy or the broker. */
const RESERVED_ENV = [
  "SANDBOX_BROKER_URL",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
];

/** Non-secret environment variables. Anything that looks like a credential is refused without printing it. */
export const EnvSchema = z
  .record(z.string(), z.string({ error: "environment values must be strings" }), {
    error: "env must be a mapping of NAME: value",
  })
  .superRefine((env, ctx) => {
    for (const [name, value] of Object.entries(env)) {
      if (!ENV_NAME.test(name)) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "not a valid variable name; allowed: letters, digits and _, not starting with a digit",
        });
        continue;
      }
      if (RESERVED_ENV.includes(name)) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message:
            name === "SANDBOX_BROKER_URL"
              ? "the broker's address is set by the toolkit from the template's broker routes; remove this variable"
              : "the proxy variables are set by the toolkit from the egress setting; remove this variable",
        });
        continue;
      }
      const reason = secretEnvReason(name, value);
      if (reason !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          params: REDACT,
          message: `refused because ${reason}; secrets never go into a task's environment (the value is not shown)`,
        });
      }
    }
  });

/**
 * A task template. With nothing but an image it is the hardened one: no network, every capability dropped,
 * no-new-privileges, the default seccomp profile, read-only root with a small `/tmp`, user 1000:1000, memory, CPU
 * and process limits, a deadline, one job folder, restart never.
 */
export const TemplateSchema = strictObject({
  /** The image to run, present on the engine (nothing is pulled). Pin it by digest in production. */
  image: z
    .string({ error: "image must be an image reference such as sandbox-busybox:1" })
    .regex(/^[a-z0-9][a-z0-9._\-/:@]*$/, {
      error: "image must be an image reference such as sandbox-busybox:1 (lower case, no spaces)",
    }),
  /** The task's command. Defaults to `sh /job/run.sh`, the script in the job folder. */
  command: z
    .array(z.string(), { error: "command must be a list of strings such as [sh, /job/run.sh]" })
    .min(1, { error: "command must have at least one element" })
    .optional(),
  /** The one writable folder. Defaults to `/job`. */
  jobFolder: JobFolderSchema.default({ containerPath: "/job" }),
  /** Limits for one task. */
  resources: ResourcesSchema.default({ vcpu: 1, memoryMb: 512, pids: 128, tmpfsMb: 64, diskMb: 1024 }),
  /** Deadline in seconds; the task is killed when it runs out. Defaults to 600. */
  timeoutSeconds: wholeNumber("timeoutSeconds", 1, 86_400, 600),
  /** `uid:gid` the task runs as; root (0) is refused. Defaults to `1000:1000`. */
  user: UserSchema.default("1000:1000"),
  /** Capabilities dropped: `all`, `seed-six`, or a list that contains NET_ADMIN. Defaults to `all`. */
  capDrop: DropSetSchema.default("all"),
  /** Where the task may send traffic. Defaults to no network at all. */
  egress: EgressSchema.default({ mode: "none", allow: [] }),
  /** The OCI runtime: `runc`, or the stronger `runsc` (gVisor) or `kata` walls. Defaults to `runc`. */
  runtime: z
    .enum(["runc", "runsc", "kata"], { error: 'runtime must be "runc", "runsc" or "kata"' })
    .default("runc"),
  /** Non-secret environment variables. Defaults to none. */
  env: EnvSchema.default({}),
  /**
   * The secrets broker's routes this template's tasks may call (`sandbox:broker.routes`), at
   * `$SANDBOX_BROKER_URL/<route>/<path>`; the broker holds the credentials. Defaults to none.
   */
  /**
   * Pre-started, gated members kept ready for this template (Docker; see {@link PoolSchema}). Defaults to none:
   * every launch starts its container.
   */
  pool: PoolSchema.optional(),
  broker: z
    .array(z.string({ error: "broker must be a list of route names" }), {
      error: "broker must be a list of route names",
    })
    .default([])
    .transform((r) => [...new Set(r)].sort()),
}).superRefine((t, ctx) => {
  // gVisor's own threads run under the task's process limit (on the sandbox's host cgroup): about 30 of them.
  if (t.runtime === "runsc" && Number.isInteger(t.resources.pids) && t.resources.pids < RUNSC_MIN_PIDS) {
    ctx.addIssue({
      code: "custom",
      path: ["resources", "pids"],
      message: `under runtime runsc the process limit also counts gVisor's own threads (about 30): pids must be at least ${RUNSC_MIN_PIDS}`,
    });
  }
});

/** The smallest process limit a gVisor task gets: below it the sandbox cannot start or its task cannot fork. */
export const RUNSC_MIN_PIDS = 64;

/**
 * The smallest process limit a gVisor template declares on Kubernetes, where the limit is the pod's (the node's
 * podPidsLimit) and the pod holds the task and its results holder: gVisor's threads for both took 76 on a 2-core node,
 * and under 64 the second container could not start.
 */
export const RUNSC_POD_MIN_PIDS = 128;
export type TemplateInput = z.input<typeof TemplateSchema>;
export type Template = z.output<typeof TemplateSchema>;

/** The default command: run the script the task put in its job folder. */
export function templateCommand(t: Template): string[] {
  return t.command ?? ["sh", `${t.jobFolder.containerPath}/run.sh`];
}

/** The template's drop list in canonical spelling. */
export function templateDrops(t: Template): string[] {
  return resolveDropSet(t.capDrop);
}
