/**
 * The egress proxy, as pure decisions: which templates go through it and on which port, the Squid configuration
 * generated from the spec, the proxy container's hardening, and the decision log's format and parser. Both backends
 * and the runtime take their proxy from here.
 */
import { createHash } from "node:crypto";
import { projectLabels } from "./launch";
import type { ResolvedProject } from "./project";

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

/**
 * Destinations the proxy refuses after resolving the name, whatever the allowlist says (DNS rebinding): private
 * ranges, loopback, link-local (the metadata address 169.254.169.254), carrier-grade NAT, "this network", and their
 * IPv6 counterparts.
 */
export const REFUSED_DESTINATIONS = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "::1",
  "fe80::/10",
  "fc00::/7",
] as const;

/** Ports an allowlist entry without a port may use: 80 for plain HTTP, 443 for TLS through CONNECT. */
export const DEFAULT_PORTS = { http: 80, tls: 443 } as const;

/** The name a task resolves the proxy by: a Docker network alias, or the Kubernetes Service. */
export function proxyHost(project: string): string {
  return `${project}-proxy`;
}

/** One proxy-mode template as the proxy serves it: its own listening port and its own allowlist. */
export interface ProxyListener {
  readonly template: string;
  readonly port: number;
  readonly allow: readonly string[];
}

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

/** An allowlist entry split into a Squid `dstdomain` value and its port (undefined: the default ports). */
export function allowEntry(entry: string): { domain: string; port: number | undefined } {
  const [host = "", port] = entry.split(":");
  const domain = host.startsWith("*.") ? host.slice(1) : host;
  return { domain, port: port === undefined ? undefined : Number(port) };
}

/**
 * Removes entries Squid would reject or warn about: duplicates and names already covered by a `.suffix` entry of
 * the same port group (Squid's `.example.com` matches example.com and every subdomain).
 */
export function dedupeDomains(domains: readonly string[]): string[] {
  const unique = [...new Set(domains)].sort();
  const wild = unique.filter((d) => d.startsWith("."));
  return unique.filter((d) => !wild.some((w) => w !== d && (d === w.slice(1) || d.endsWith(w))));
}

/** Marks the decision log's lines in the proxy's output. */
export const DECISION_TAG = "sandbox.decision";

/**
 * The Squid configuration of a project's proxy (Squid 5 syntax). Order matters: a name that is not on the
 * template's allowlist is refused before any DNS lookup (no lookups for arbitrary names), then the resolved address
 * is judged (`dst`: every address the name resolves to must be outside {@link REFUSED_DESTINATIONS}), then the port
 * (80 or 443; CONNECT only to 443, or to the entry's own port). Nothing is cached; every decision is logged to
 * stdout in the decision format.
 */
export function squidConfig(listeners: readonly ProxyListener[]): string {
  if (listeners.length === 0) throw new Error("no template uses the proxy: there is nothing to configure");
  const lines: string[] = [
    "# Generated by sandbox-projects from the project spec; every change comes from the spec.",
    "pid_filename none",
    "cache deny all",
    "cache_mem 0 MB",
    "cache_store_log none",
    "netdb_filename none",
    "logfile_rotate 0",
    `coredump_dir ${PROXY_RUN_DIR}`,
    "cache_log stdio:/dev/stderr",
    "error_directory /usr/share/squid/errors/templates",
    "mime_table /usr/share/squid/mime.conf",
    "icon_directory /usr/share/squid/icons",
    "via off",
    "forwarded_for delete",
    "httpd_suppress_version_string on",
    "shutdown_lifetime 1 seconds",
    "pinger_enable off",
    "visible_hostname sandbox-proxy",
    "connect_timeout 10 seconds",
    `logformat sandbox ${DECISION_TAG} %ts.%03tu listener=%>lp client=%>a method=%rm host=%>rd port=%>rP status=%>Hs squid=%Ss server=%<a`,
    "access_log stdio:/dev/stdout logformat=sandbox",
    `acl refused_dst dst ${REFUSED_DESTINATIONS.join(" ")}`,
    `acl web_ports port ${DEFAULT_PORTS.http} ${DEFAULT_PORTS.tls}`,
    `acl tls_port port ${DEFAULT_PORTS.tls}`,
    "http_access deny manager",
  ];
  const hostRules: string[] = [];
  const allowRules: string[] = [];
  for (const l of listeners) {
    const id = l.template.replace(/[^A-Za-z0-9_]/g, "_");
    lines.push(`http_port ${l.port} name=t_${id}`, `acl via_${id} myportname t_${id}`);
    const groups = new Map<number | undefined, string[]>();
    for (const entry of l.allow) {
      const { domain, port } = allowEntry(entry);
      groups.set(port, [...(groups.get(port) ?? []), domain]);
    }
    lines.push(
      `acl host_${id} dstdomain -n ${dedupeDomains(l.allow.map((e) => allowEntry(e).domain)).join(" ")}`,
    );
    hostRules.push(`http_access deny via_${id} !host_${id}`);
    const ports = [...groups.keys()].sort((a, b) => (a ?? -1) - (b ?? -1));
    for (const port of ports) {
      const domains = dedupeDomains(groups.get(port) ?? []);
      const acl = port === undefined ? `allow_${id}` : `allow_${id}_${port}`;
      lines.push(`acl ${acl} dstdomain -n ${domains.join(" ")}`);
      if (port === undefined) {
        allowRules.push(`http_access allow via_${id} ${acl} CONNECT tls_port`);
        allowRules.push(`http_access allow via_${id} ${acl} !CONNECT web_ports`);
      } else {
        if (!lines.includes(`acl port_${port} port ${port}`)) lines.push(`acl port_${port} port ${port}`);
        allowRules.push(`http_access allow via_${id} ${acl} port_${port}`);
      }
    }
  }
  // 1. A name not on the allowlist of the port it came in on: refused before any DNS lookup.
  // 2. Every address the name resolves to is judged; one refused address refuses the request (DNS rebinding).
  // 3. The entry's ports: 80 plain, 443 through CONNECT, or exactly the entry's own port.
  lines.push(...hostRules, "http_access deny refused_dst", ...allowRules, "http_access deny all");
  return `${lines.join("\n")}\n`;
}

/** One decision of the proxy, as its log line says. */
export interface ProxyDecision {
  readonly time: number;
  /** The proxy port the request came in on (which template's allowlist applied). */
  readonly listener: number;
  /** The task's address on the network it reached the proxy through. */
  readonly client: string;
  readonly method: string;
  readonly host: string;
  readonly port: number;
  /** The HTTP status the proxy answered with. */
  readonly status: number;
  readonly decision: "allowed" | "denied";
  /** Squid's own result code (TCP_DENIED, TCP_MISS, TCP_TUNNEL, ...). */
  readonly squid: string;
  /** The address the proxy connected to, or undefined when it connected nowhere. */
  readonly server: string | undefined;
}

/** Parses the proxy's decision lines out of its output; other lines are ignored. */
export function parseDecisionLog(text: string): ProxyDecision[] {
  const out: ProxyDecision[] = [];
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(`${DECISION_TAG} `);
    if (at < 0) continue;
    const [time, ...pairs] = line
      .slice(at + DECISION_TAG.length + 1)
      .trim()
      .split(/\s+/);
    const f = Object.fromEntries(
      pairs.map((p) => {
        const eq = p.indexOf("=");
        return [p.slice(0, eq), p.slice(eq + 1)];
      }),
    );
    const squid = f.squid ?? "";
    out.push({
      time: Number(time),
      listener: Number(f.listener),
      client: f.client ?? "",
      method: f.method ?? "",
      host: f.host ?? "",
      port: Number(f.port),
      status: Number(f.status),
      decision: /DENIED/.test(squid) ? "denied" : "allowed",
      squid,
      server: f.server === undefined || f.server === "-" ? undefined : f.server,
    });
  }
  return out;
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
    name: proxyHost(name),
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
