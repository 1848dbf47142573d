/**
 * Why the proxy decided as it did about one request, in words, from its decision line and the template's allowlist,
 * read as the generated Squid configuration reads them (components/model/squid.ts): a name on no entry of the list
 * (and every IP literal) is refused before any lookup; an entry admits 80 and 443 plainly and 443 through CONNECT,
 * or exactly its own port; what passes both and is still refused resolved to a refused range. An allowed request
 * the proxy could not complete failed upstream.
 */
import { allowEntry, DEFAULT_PORTS } from "./egress";
import type { ProxyDecision } from "./squid";

/** True when `host` matches the Squid `dstdomain` entry `domain` (`.suffix` also matches the bare suffix). */
function matches(host: string, domain: string): boolean {
  const h = host.toLowerCase();
  const d = domain.toLowerCase();
  return d.startsWith(".") ? h === d.slice(1) || h.endsWith(d) : h === d;
}

/** The reason of one decision, for the audit and the run's result. */
export function decisionReason(d: ProxyDecision, allow: readonly string[]): string {
  if (d.decision === "allowed") {
    return d.server === undefined && d.status >= 500
      ? `the name did not resolve or the upstream did not answer (status ${d.status})`
      : "on the template's allowlist";
  }
  const entries = allow.map(allowEntry).filter((e) => matches(d.host, e.domain));
  if (entries.length === 0) return "not on the template's allowlist (an IP address never is)";
  const connect = d.method.toUpperCase() === "CONNECT";
  const portOk = entries.some((e) =>
    e.port !== undefined
      ? d.port === e.port
      : connect
        ? d.port === DEFAULT_PORTS.tls
        : d.port === DEFAULT_PORTS.http || d.port === DEFAULT_PORTS.tls,
  );
  if (!portOk) {
    return `port ${d.port} is not allowed for this name (80 and 443, 443 through CONNECT, or the entry's own port)`;
  }
  return "the name resolves to a refused address (private, loopback, link-local or the metadata address)";
}
