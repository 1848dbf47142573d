import { describe, expect, it } from "vitest";
import {
  ALL_CAPABILITIES,
  CAPABILITIES,
  canonicalCapability,
  DOCKER_DEFAULT_CAPABILITIES,
  DropSetSchema,
  decodeCapabilityMask,
  dropsCapability,
  effectiveCapabilities,
  encodeCapabilityMask,
  resolveDropSet,
  SEED_SIX,
} from "../../components/model";

describe("the capability catalogue", () => {
  it("numbers all 41 capabilities from CHOWN (0) to CHECKPOINT_RESTORE (40) without gaps", () => {
    expect(ALL_CAPABILITIES).toHaveLength(41);
    expect(ALL_CAPABILITIES.map((c) => CAPABILITIES[c])).toEqual([...Array(41).keys()]);
    expect(CAPABILITIES.NET_ADMIN).toBe(12);
    expect(CAPABILITIES.SYS_ADMIN).toBe(21);
    expect(CAPABILITIES.MKNOD).toBe(27);
    expect(CAPABILITIES.SETFCAP).toBe(31);
  });

  it("names the seed six", () => {
    expect(SEED_SIX).toEqual(["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"]);
  });
});

describe("canonicalCapability", () => {
  it.each([
    ["NET_ADMIN", "NET_ADMIN"],
    ["net_admin", "NET_ADMIN"],
    ["CAP_NET_ADMIN", "NET_ADMIN"],
    ["cap_net_admin", "NET_ADMIN"],
    ["Cap_Net_Admin", "NET_ADMIN"],
    ["  NET_ADMIN ", "NET_ADMIN"],
    ["all", "ALL"],
    ["ALL", "ALL"],
    ["CAP_ALL", "ALL"],
    ["NET-ADMIN", undefined],
    ["CAP_", undefined],
    ["", undefined],
    ["CAP_CAP_NET_ADMIN", undefined],
    ["NETADMIN", undefined],
  ])("%j is %j", (raw, expected) => {
    expect(canonicalCapability(raw)).toBe(expected);
  });
});

describe("dropsCapability", () => {
  it.each([
    [["ALL"], true],
    [["all"], true],
    [["cap_net_admin"], true],
    [["NET_RAW", "CAP_NET_ADMIN"], true],
    [["NET_RAW", "MKNOD"], false],
    [[], false],
    [["NET_ADMINS"], false],
  ])("%j drops NET_ADMIN: %j", (drops, expected) => {
    expect(dropsCapability(drops, "NET_ADMIN")).toBe(expected);
  });
});

describe("effectiveCapabilities", () => {
  it("keeps Docker's defaults minus the drops", () => {
    expect(effectiveCapabilities(SEED_SIX, [])).toEqual([
      "CHOWN",
      "DAC_OVERRIDE",
      "FOWNER",
      "FSETID",
      "KILL",
      "SETGID",
      "SETUID",
      "NET_BIND_SERVICE",
      "AUDIT_WRITE",
    ]);
  });
  it("keeps nothing when ALL is dropped", () => {
    expect(effectiveCapabilities(["all"], [])).toEqual([]);
  });
  it("lets an add win over a drop of ALL, as the engine does", () => {
    expect(effectiveCapabilities(["ALL"], ["cap_net_admin"])).toEqual(["NET_ADMIN"]);
  });
  it("starts from Docker's 14 defaults", () => {
    expect(effectiveCapabilities([], [])).toHaveLength(DOCKER_DEFAULT_CAPABILITIES.length);
  });
});

describe("decodeCapabilityMask", () => {
  it("decodes the seed's mask 000001ff77fbceff: every capability but the seed six", () => {
    const names = decodeCapabilityMask("000001ff77fbceff");
    const missing = ALL_CAPABILITIES.filter((c) => !names.includes(c));
    expect(missing).toEqual(["SETPCAP", "NET_ADMIN", "NET_RAW", "SYS_CHROOT", "MKNOD", "SETFCAP"]);
    expect([...missing].sort()).toEqual([...SEED_SIX].sort());
    expect(names).toHaveLength(35);
  });
  it("decodes Docker's default bounding set 00000000a80425fb", () => {
    expect(decodeCapabilityMask("00000000a80425fb")).toEqual([
      "CHOWN",
      "DAC_OVERRIDE",
      "FOWNER",
      "FSETID",
      "KILL",
      "SETGID",
      "SETUID",
      "SETPCAP",
      "NET_BIND_SERVICE",
      "NET_RAW",
      "SYS_CHROOT",
      "MKNOD",
      "AUDIT_WRITE",
      "SETFCAP",
    ]);
  });
  it.each([
    ["0000000000000000", []],
    ["0x1000", ["NET_ADMIN"]],
    ["000001ffffffffff", ALL_CAPABILITIES],
    ["0000020000000000", ["bit41"]],
  ])("%s decodes to %j", (mask, expected) => {
    expect(decodeCapabilityMask(mask)).toEqual(expected);
  });
  it("refuses what is not a mask", () => {
    expect(() => decodeCapabilityMask("xyz")).toThrow(
      'capability mask "xyz" is not a hexadecimal mask of at most 16 digits (e.g. 00000000a80425fb)',
    );
  });
  it("round-trips with encodeCapabilityMask", () => {
    expect(encodeCapabilityMask(DOCKER_DEFAULT_CAPABILITIES)).toBe("00000000a80425fb");
    expect(encodeCapabilityMask(["all"])).toBe("000001ffffffffff");
    expect(decodeCapabilityMask(encodeCapabilityMask(SEED_SIX)).sort()).toEqual([...SEED_SIX].sort());
  });
});

describe("drop sets", () => {
  it.each([
    ["all", ["ALL"]],
    ["seed-six", ["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"]],
    [
      ["cap_net_admin", "NET_RAW", "net_admin"],
      ["NET_ADMIN", "NET_RAW"],
    ],
    [["NET_RAW", "all"], ["ALL"]],
  ])("%j resolves to %j", (set, expected) => {
    expect(resolveDropSet(DropSetSchema.parse(set))).toEqual(expected);
  });

  it.each([
    [
      ["NET_RAW", "MKNOD"],
      'drop list [NET_RAW, MKNOD] leaves NET_ADMIN; allowed: "all", "seed-six", or a list that contains NET_ADMIN or ALL',
    ],
    [[], "an explicit drop list cannot be empty"],
    [
      ["NET_ADMIN", "CAP_FLY"],
      '"CAP_FLY" is not a Linux capability; allowed: ALL or a capability name such as NET_ADMIN or CAP_NET_RAW (any case)',
    ],
  ])("refuses %j with %j", (set, message) => {
    const r = DropSetSchema.safeParse(set);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message)).toEqual([message]);
  });

  it("refuses a named set that does not exist", () => {
    expect(DropSetSchema.safeParse("seed-seven").success).toBe(false);
  });
});
