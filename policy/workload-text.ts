/** The text a container is given besides its image (part of the workload view, policy/workload.ts). */
import type { Val } from "./values";

/** One environment variable. */
export interface EnvView {
  readonly name: Val<string>;
  /** The literal value, when the variable has one. */
  readonly value: Val<string>;
  /** Where the value comes from: a literal, a Kubernetes Secret key, a ConfigMap key, a field, the host. */
  readonly from:
    | "literal"
    | "secretKeyRef"
    | "secretRef"
    | "configMapKeyRef"
    | "configMapRef"
    | "fieldRef"
    | "host"
    | "other";
  /** For `envFrom`, `secretKeyRef` and `configMapKeyRef`: the object's name. */
  readonly ref?: Val<string>;
  /** `configMapKeyRef`: the key read; `envFrom.configMapRef`: the `prefix` put before each key. */
  readonly key?: Val<string>;
  /** True when the value is a Pulumi secret (or was redacted as one). */
  readonly tainted: boolean;
  /** Where it was written, e.g. `envs[2]` or `spec.containers[0].env[1]`. */
  readonly path: string;
}

/** One string the container runs with (command, args, entrypoint). */
export interface ArgView {
  readonly value: Val<string>;
  readonly tainted: boolean;
  readonly path: string;
}

/** A command the engine runs inside the container besides its entry point: an exec probe or hook, a healthcheck. */
export interface HookCommandView {
  /** What runs it, for messages (`livenessProbe`, `healthcheck`). */
  readonly what: string;
  readonly args: readonly ArgView[];
}

/** A header the kubelet sends to the container (httpGet probes and lifecycle hooks). */
export interface HeaderView {
  readonly name: Val<string>;
  readonly value: Val<string>;
  readonly tainted: boolean;
  readonly path: string;
}

/**
 * Text the container gets in its file system besides its image: a file uploaded before it starts (Docker
 * `uploads`), or a downward-API file that holds the pod's annotations or labels.
 */
export interface FileTextView {
  /** Where the file is in the container, when known. */
  readonly file: Val<string>;
  readonly content: Val<string>;
  readonly tainted: boolean;
  readonly path: string;
}
