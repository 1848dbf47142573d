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

const PRIVATE_V4 = [
  [10, 0, 8],
  [172, 16, 12],
  [192, 168, 16],
] as const;

function ipv4ToInt(ip: string): number | undefined {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

/** True when `cidr` is an IPv4 block inside 10/8, 172.16/12 or 192.168/16. */
export function isPrivateIpv4Cidr(cidr: string): boolean {
  const [ip, lenText] = cidr.split("/");
  const len = Number(lenText);
  const addr = ip === undefined ? undefined : ipv4ToInt(ip);
  if (addr === undefined || !Number.isInteger(len) || len < 8 || len > 30) return false;
  return PRIVATE_V4.some(([a, b, plen]) => {
    const base = ipv4ToInt(`${a}.${b}.0.0`) ?? 0;
    const size = 2 ** (32 - plen);
    return len >= plen && addr >= base && addr < base + size;
  });
}

/**
 * The project's private network. It is always internal (no route off the machine) with traffic between task
 * containers disabled; the only settings are where it lives and the proxy's port.
 */
export const NetworkSchema = strictObject({
  /** IPv4 subnet of the project network, inside 10/8, 172.16/12 or 192.168/16. Defaults to one the engine picks. */
  subnet: z
    .string({ error: "subnet must be a private IPv4 CIDR such as 10.231.0.0/24" })
    .refine(isPrivateIpv4Cidr, {
      error: "subnet must be a private IPv4 CIDR (inside 10/8, 172.16/12 or 192.168/16, prefix /8 to /30)",
    })
    .optional(),
  /** TCP port the allowlist proxy listens on inside the network. Defaults to 3128. */
  proxyPort: z
    .number({ error: "proxyPort must be a whole number between 1 and 65535" })
    .int({ error: "proxyPort must be a whole number between 1 and 65535" })
    .min(1, { error: "proxyPort must be a whole number between 1 and 65535" })
    .max(65535, { error: "proxyPort must be a whole number between 1 and 65535" })
    .default(3128),
});
export type Network = z.output<typeof NetworkSchema>;
