/**
 * Class 7 (HostConfig fields at the top level): docker v20.10.24 ... v26.1.5 (the toolkit's docker.io)
 * decode a create body into runconfig `ContainerConfigWrapper`, whose embedded `*HostConfig` promotes every HostConfig
 * field to the top level; `getHostConfig` uses them when `HostConfig` is absent or null, and otherwise copies only
 * Memory, MemorySwap, CpuShares, CpusetCpus and VolumeDriver where HostConfig leaves them zero. Docker v27 and later
 * ignore the top level. So the top-level fields are judged as those daemons apply them, and a body whose top-level
 * fields take effect fails closed (it means different things on different daemons).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { engineBody } from "../fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "../harness";

const BASE = { Image: "busybox:1.36", Cmd: ["sh", "-c", "id"], User: "1000:1000" };
const SAFE_HOST = JSON.parse(engineBody()).HostConfig as Record<string, unknown>;
const file = (body: object) => ({ "create.json": `${JSON.stringify(body)}\n` });
const DANGER: [string, unknown, string][] = [
  ["Privileged", true, "sandbox-disallow-privileged"],
  ["PidMode", "host", "sandbox-disallow-host-namespaces"],
  ["NetworkMode", "host", "sandbox-disallow-host-namespaces"],
  ["Binds", ["/var/run/docker.sock:/var/run/docker.sock"], "sandbox-disallow-runtime-socket"],
  ["CapAdd", ["SYS_ADMIN"], "sandbox-disallow-added-capabilities"],
];

describe("class 7: top-level HostConfig fields as docker.io 20.10 applies them (generated)", () => {
  it("with no HostConfig (absent or null), a top-level wall-breaking field gets the plain spelling's verdict", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...DANGER),
        fc.boolean(),
        fc.constantFrom(
          (k: string) => k,
          (k: string) => k.toLowerCase(),
        ),
        async ([key, value, rule], nullInner, spell) => {
          const top = { ...SAFE_HOST, [key]: value };
          const spelled = Object.fromEntries(Object.entries(top).map(([k, v]) => [spell(k), v]));
          const body = { ...BASE, ...(nullInner ? { HostConfig: null } : {}), ...spelled };
          assertVerdict(await scanFiles(file(body)), blocked(rule));
          assertVerdict(await scanFiles({ "create.json": engineBody({}, { [key]: value }) }), blocked(rule));
        },
      ),
      { numRuns: 20 },
    );
  });
  it("a hardened HostConfig written only at the top level fails closed, naming why", async () => {
    const r = await scanFiles(file({ ...BASE, ...SAFE_HOST }));
    assertVerdict(r, blocked("sandbox-require-readable-values"));
    const m = r.report.findings.find((f) => f.ruleId === "sandbox-require-readable-values")?.message ?? "";
    expect(m).toContain("top level");
    expect(m).toContain("v27");
  });
  it("with a HostConfig, top-level Memory fills its zero Memory (and fails closed: v27 ignores it)", async () => {
    const { Memory: _m, MemorySwap: _s, ...inner } = SAFE_HOST;
    const r = await scanFiles(file({ ...BASE, Memory: 134217728, HostConfig: inner }));
    assertVerdict(r, blocked("sandbox-require-readable-values"));
    expect(r.report.findings.map((f) => f.message).join("\n")).not.toContain("no memory limit");
  });
  it("with a HostConfig, other top-level fields are ignored by every daemon (passes)", async () => {
    assertVerdict(
      await scanFiles(file({ ...BASE, Privileged: true, PidMode: "host", HostConfig: SAFE_HOST })),
      passes,
    );
  });
  it("a body with everything under HostConfig passes", async () => {
    assertVerdict(await scanFiles({ "create.json": engineBody() }), passes);
  });
});
