/**
 * Where a task may send traffic: the egress schema of a template, and what an allowlist entry means. The proxy's
 * Squid configuration (`squid.ts`) and the proxy's Kubernetes network policy are built from these.
 */
import { z } from "zod";
import { strictObject } from "./errors";

const HOST_LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOST_PATTERN = new RegExp(
  `^(?:\\*\\.)?(?:${HOST_LABEL}\\.)+[a-z][a-z0-9-]{0,61}[a-z0-9](?::[0-9]{1,5})?$`,
);
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$/;

/**
 * One allowlist entry: a host name (`pypi.org`), a wildcard for its subdomains (`*.github.com`), optionally with a
 * port. IP literals are refused: the proxy judges the address a name resolves to, and a literal would let a
 * template name a private range or the metadata address directly.
 */
export const AllowedHostSchema = z
  .string({ error: "an allowlist entry must be a host name such as pypi.org or *.github.com" })
  .transform((h) => h.trim().toLowerCase())
  .superRefine((h, ctx) => {
    if (IPV4.test(h) || h.includes("[") || /^[0-9a-f:]+$/.test(h)) {
      ctx.addIssue({
        code: "custom",
        message: "an IP address is not allowed; allowed: host names such as pypi.org or *.github.com",
      });
      return;
    }
    const port = h.includes(":") ? Number(h.split(":")[1]) : 443;
    if (!HOST_PATTERN.test(h) || port < 1 || port > 65535) {
      ctx.addIssue({
        code: "custom",
        message: "not a host name; allowed: pypi.org, *.github.com, or either with :port (1-65535)",
      });
    }
  });

/**
 * Where a task may send traffic. `none` (the default): the container has no network at all. `proxy`: the
 * container sits on the project's internal network and its only way out is the project's allowlist proxy, which
 * forwards only to `allow` and never to private ranges or the metadata address.
 */
export const EgressSchema = strictObject({
  /** `none` (no network; the default) or `proxy` (only through the allowlist proxy). */
  mode: z.enum(["none", "proxy"], { error: 'egress mode must be "none" or "proxy"' }).default("none"),
  /** Hosts the proxy forwards to; required with `proxy`, empty with `none`. Defaults to none. */
  allow: z.array(AllowedHostSchema, { error: "allow must be a list of host names" }).default([]),
}).superRefine((e, ctx) => {
  if (e.mode === "proxy" && e.allow.length === 0) {
    ctx.addIssue({
      code: "custom",
      path: ["allow"],
      message: 'egress mode "proxy" needs at least one allowed host; use mode "none" for no egress',
    });
  }
  if (e.mode === "none" && e.allow.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["allow"],
      message: 'hosts are allowed only with egress mode "proxy"; with mode "none" the task has no network',
    });
  }
});
export type Egress = z.output<typeof EgressSchema>;

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

/** An allowlist entry split into a Squid `dstdomain` value and its port (undefined: the default ports). */
export function allowEntry(entry: string): { domain: string; port: number | undefined } {
  const [host = "", port] = entry.split(":");
  const domain = host.startsWith("*.") ? host.slice(1) : host;
  return { domain, port: port === undefined ? undefined : Number(port) };
}
