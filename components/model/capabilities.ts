import { z } from "zod";

/**
 * The Linux capability catalogue, by bit number (include/uapi/linux/capability.h, kernel 5.9+).
 * The bit is the position in the CapEff/CapPrm/CapBnd masks of /proc/<pid>/status.
 */
export const CAPABILITIES = {
  CHOWN: 0,
  DAC_OVERRIDE: 1,
  DAC_READ_SEARCH: 2,
  FOWNER: 3,
  FSETID: 4,
  KILL: 5,
  SETGID: 6,
  SETUID: 7,
  SETPCAP: 8,
  LINUX_IMMUTABLE: 9,
  NET_BIND_SERVICE: 10,
  NET_BROADCAST: 11,
  NET_ADMIN: 12,
  NET_RAW: 13,
  IPC_LOCK: 14,
  IPC_OWNER: 15,
  SYS_MODULE: 16,
  SYS_RAWIO: 17,
  SYS_CHROOT: 18,
  SYS_PTRACE: 19,
  SYS_PACCT: 20,
  SYS_ADMIN: 21,
  SYS_BOOT: 22,
  SYS_NICE: 23,
  SYS_RESOURCE: 24,
  SYS_TIME: 25,
  SYS_TTY_CONFIG: 26,
  MKNOD: 27,
  LEASE: 28,
  AUDIT_WRITE: 29,
  AUDIT_CONTROL: 30,
  SETFCAP: 31,
  MAC_OVERRIDE: 32,
  MAC_ADMIN: 33,
  SYSLOG: 34,
  WAKE_ALARM: 35,
  BLOCK_SUSPEND: 36,
  AUDIT_READ: 37,
  PERFMON: 38,
  BPF: 39,
  CHECKPOINT_RESTORE: 40,
} as const;

/** A capability name in canonical form: upper case, without the `CAP_` prefix. */
export type Capability = keyof typeof CAPABILITIES;

/** Every capability, ordered by bit. */
export const ALL_CAPABILITIES: readonly Capability[] = (Object.keys(CAPABILITIES) as Capability[]).sort(
  (a, b) => CAPABILITIES[a] - CAPABILITIES[b],
);

/** The capabilities Docker grants a container by default (moby's `oci/caps/defaults.go`). */
export const DOCKER_DEFAULT_CAPABILITIES: readonly Capability[] = [
  "CHOWN",
  "DAC_OVERRIDE",
  "FSETID",
  "FOWNER",
  "MKNOD",
  "NET_RAW",
  "SETGID",
  "SETUID",
  "SETFCAP",
  "SETPCAP",
  "NET_BIND_SERVICE",
  "SYS_CHROOT",
  "KILL",
  "AUDIT_WRITE",
];

/**
 * The six capabilities the field guides name for an agent sandbox: raw sockets, device nodes, chroot, file
 * capabilities, capability-set changes and network administration.
 */
export const SEED_SIX: readonly Capability[] = [
  "NET_RAW",
  "MKNOD",
  "SYS_CHROOT",
  "SETFCAP",
  "SETPCAP",
  "NET_ADMIN",
];

/** The named drop sets a template may ask for. `all` drops every capability. */
export const NAMED_DROP_SETS = { all: ["ALL"], "seed-six": SEED_SIX } as const;
export type NamedDropSet = keyof typeof NAMED_DROP_SETS;

/** A normalized drop list entry: a capability or the word ALL. */
export type DropEntry = Capability | "ALL";

/**
 * Canonical form of a capability spelling: trims, upper-cases, and strips one `CAP_` prefix.
 * Returns undefined for a spelling that names no capability (and is not ALL).
 *
 * `cap_net_admin`, `CAP_NET_ADMIN`, `Net_Admin` and ` net_admin ` all give `NET_ADMIN`.
 */
export function canonicalCapability(raw: string): DropEntry | undefined {
  let name = raw.trim().toUpperCase();
  if (name.startsWith("CAP_")) name = name.slice(4);
  if (name === "ALL") return "ALL";
  return Object.hasOwn(CAPABILITIES, name) ? (name as Capability) : undefined;
}

/** True when a drop list (in any spelling) removes `capability`: it names it or names ALL. */
export function dropsCapability(drops: readonly string[], capability: Capability): boolean {
  return drops.some((d) => {
    const c = canonicalCapability(d);
    return c === "ALL" || c === capability;
  });
}

/**
 * The capabilities a container keeps, given Docker's defaults, a drop list and an add list (any spelling).
 * Adds win over drops, as in the engine: `--cap-drop ALL --cap-add NET_ADMIN` keeps NET_ADMIN.
 */
export function effectiveCapabilities(
  drops: readonly string[],
  adds: readonly string[],
  base: readonly Capability[] = DOCKER_DEFAULT_CAPABILITIES,
): Capability[] {
  const dropped = new Set(drops.map(canonicalCapability));
  const kept = new Set<Capability>(dropped.has("ALL") ? [] : base.filter((c) => !dropped.has(c)));
  for (const a of adds) {
    const c = canonicalCapability(a);
    if (c === "ALL") for (const x of ALL_CAPABILITIES) kept.add(x);
    else if (c) kept.add(c);
  }
  return ALL_CAPABILITIES.filter((c) => kept.has(c));
}

/**
 * Decodes a capability mask as printed in /proc/<pid>/status (`CapEff: 000001ffffffffff`) into capability names,
 * ordered by bit. Bits above the catalogue are reported as `bit<N>` so nothing is silently lost.
 */
export function decodeCapabilityMask(hex: string): string[] {
  const clean = hex.trim().toLowerCase().replace(/^0x/, "");
  if (!/^[0-9a-f]{1,16}$/.test(clean)) {
    throw new Error(
      `capability mask "${hex}" is not a hexadecimal mask of at most 16 digits (e.g. 00000000a80425fb)`,
    );
  }
  const mask = BigInt(`0x${clean}`);
  const names: string[] = [];
  for (let bit = 0n; bit < 64n; bit++) {
    if ((mask >> bit) & 1n) {
      const name = ALL_CAPABILITIES[Number(bit)];
      names.push(name ?? `bit${bit}`);
    }
  }
  return names;
}

/** Encodes capability names (any spelling) as a 16-digit mask, the inverse of {@link decodeCapabilityMask}. */
export function encodeCapabilityMask(caps: readonly string[]): string {
  let mask = 0n;
  for (const raw of caps) {
    const c = canonicalCapability(raw);
    if (c === undefined) throw new Error(`"${raw}" is not a Linux capability`);
    if (c === "ALL") for (const x of ALL_CAPABILITIES) mask |= 1n << BigInt(CAPABILITIES[x]);
    else mask |= 1n << BigInt(CAPABILITIES[c]);
  }
  return mask.toString(16).padStart(16, "0");
}

const capabilitySpelling = z.string().superRefine((raw, ctx) => {
  if (canonicalCapability(raw) === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `"${raw}" is not a Linux capability; allowed: ALL or a capability name such as NET_ADMIN or CAP_NET_RAW (any case)`,
    });
  }
});

/**
 * A drop set: a named set (`all`, `seed-six`) or an explicit list of capabilities. An explicit list must drop
 * NET_ADMIN (or ALL): a task that can reconfigure its own network can walk around every network wall.
 */
export const DropSetSchema = z
  .union([
    z.enum(["all", "seed-six"]),
    z.array(capabilitySpelling).min(1, "an explicit drop list cannot be empty"),
  ])
  .superRefine((set, ctx) => {
    if (typeof set === "string") return;
    if (
      set.length > 0 &&
      set.every((c) => canonicalCapability(c) !== undefined) &&
      !dropsCapability(set, "NET_ADMIN")
    ) {
      ctx.addIssue({
        code: "custom",
        message: `drop list [${set.join(", ")}] leaves NET_ADMIN; allowed: "all", "seed-six", or a list that contains NET_ADMIN or ALL`,
      });
    }
  });
export type DropSet = z.infer<typeof DropSetSchema>;

/** The drop list a drop set stands for, in canonical spelling, without duplicates. */
export function resolveDropSet(set: DropSet): DropEntry[] {
  if (set === "all") return ["ALL"];
  if (set === "seed-six") return [...SEED_SIX];
  const out: DropEntry[] = [];
  for (const raw of set) {
    const c = canonicalCapability(raw);
    if (c !== undefined && !out.includes(c)) out.push(c);
  }
  return out.includes("ALL") ? ["ALL"] : out;
}
