import { z } from "zod";
import { strictObject } from "./errors";

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
