/**
 * The egress proxy's container, as both backends and the runtime run it: its image, user, limits, where it keeps its
 * files and reads its configuration, and the listeners it serves. Its configuration is generated in `squid.ts`; what a
 * backend needs to run it for a project is decided in `proxy-spec.ts`.
 */

/** The offline image `toolchain/proxy-image.sh` builds from Debian's Squid. */
export const PROXY_IMAGE = "sandbox-proxy:1";

/** The proxy's user: Debian's `proxy` (13:13), never root. */
export const PROXY_USER = "13:13";

/** Limits of the proxy container (it serves every proxy-mode task of a project at once). */
export const PROXY_RESOURCES = { vcpu: 0.5, memoryMb: 256, pids: 128, tmpfsMb: 16 } as const;

/** Where the proxy keeps its runtime files (the generated configuration): a tmpfs; the root stays read-only. */
export const PROXY_RUN_DIR = "/run/squid";

/** The variable the proxy image's entry script reads its configuration from (Docker). */
export const PROXY_CONFIG_ENV = "SANDBOX_PROXY_CONFIG";

/** The file the proxy image's entry script reads when the variable is unset (Kubernetes mounts a ConfigMap here). */
export const PROXY_CONFIG_DIR = "/etc/sandbox-proxy";

/** One proxy-mode template as the proxy serves it: its own listening port and its own allowlist. */
export interface ProxyListener {
  readonly template: string;
  readonly port: number;
  readonly allow: readonly string[];
}
