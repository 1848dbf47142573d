/**
 * The egress proxy of a project, decided once from its templates: which templates go through it and on which port,
 * and everything a backend needs to run it.
 */
import { createHash } from "node:crypto";
import { projectLabels } from "./labels";
import { proxyName } from "./names";
import type { ResolvedProject } from "./project";
import { PROXY_IMAGE, PROXY_RESOURCES, PROXY_USER, type ProxyListener } from "./proxy";
import { squidConfig } from "./squid";

/**
 * The proxy's listeners: one port per proxy-mode template, `proxyPort` for the first (by name) and the next ports
 * for the others, so that a task can reach only its own template's allowlist (the proxy tells templates apart by
 * the port a request came in on). Empty when no template uses the proxy.
 */
export function proxyListeners(project: ResolvedProject): ProxyListener[] {
  const base = project.spec.network.proxyPort;
  const names = Object.keys(project.spec.templates)
    .filter((n) => project.spec.templates[n]?.egress.mode === "proxy")
    .sort();
  if (base + names.length - 1 > 65535) {
    throw new Error(
      `network.proxyPort ${base} leaves no room for ${names.length} proxy ports (one per proxy-mode template)`,
    );
  }
  return names.map((template, i) => ({
    template,
    port: base + i,
    allow: project.spec.templates[template]?.egress.allow ?? [],
  }));
}

/** The port template `template`'s tasks reach the proxy on, or undefined when it does not use the proxy. */
export function proxyPortOf(project: ResolvedProject, template: string): number | undefined {
  return proxyListeners(project).find((l) => l.template === template)?.port;
}

/**
 * Everything a backend needs to run a project's proxy, decided once: its name (what tasks resolve), image, user,
 * limits, listeners and the generated configuration with its hash (a changed configuration replaces the proxy).
 */
export interface ProxySpec {
  readonly kind: "sandbox.proxy/v1";
  readonly project: string;
  /** The container's (Docker) or Service's (Kubernetes) name, and the alias tasks resolve: `<project>-proxy`. */
  readonly name: string;
  readonly image: string;
  readonly user: string;
  readonly resources: typeof PROXY_RESOURCES;
  readonly listeners: readonly ProxyListener[];
  readonly config: string;
  readonly configHash: string;
  /** The project's internal network, which the proxy joins (Docker). */
  readonly projectNetwork: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** The proxy of a project, or undefined when no template sends traffic through it. */
export function proxySpec(project: ResolvedProject, networkName: string): ProxySpec | undefined {
  const listeners = proxyListeners(project);
  if (listeners.length === 0) return undefined;
  const config = squidConfig(listeners);
  const configHash = createHash("sha256").update(config).digest("hex").slice(0, 16);
  const name = project.spec.name;
  return {
    kind: "sandbox.proxy/v1",
    project: name,
    name: proxyName(name),
    image: PROXY_IMAGE,
    user: PROXY_USER,
    resources: PROXY_RESOURCES,
    listeners,
    config,
    configHash,
    projectNetwork: networkName,
    labels: projectLabels(name, "proxy", undefined, configHash),
  };
}
