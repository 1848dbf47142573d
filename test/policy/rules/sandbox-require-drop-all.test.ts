/**
 * sandbox-require-drop-all (advisory): every container drops ALL capabilities or, while `acceptSeedSix` is on (the
 * default), at least NET_RAW, MKNOD, SYS_CHROOT, SETFCAP, SETPCAP and NET_ADMIN. The drop list is read as the runtime
 * reads it: Docker upper-cases and accepts `CAP_`; on Kubernetes containerd takes `ALL` in any case and prefixes
 * every other entry with `CAP_` itself, so `CAP_ALL`, `CAP_NET_RAW` and ` ALL` drop nothing there. `exactNames`
 * counts only the exact strings Pod Security compares (`ALL`).
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, type RunOptions, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-drop-all";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
const SIX = ["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"];
const KEEPS_SIX = `; it keeps [${SIX.join(", ")}]`;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const cfg = (config?: object): RunOptions => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (drops: unknown, config?: object) =>
  validate(
    DOCKER,
    { ...safeContainer(), capabilities: drops === undefined ? undefined : { drops } },
    cfg(config),
  );
function podSpec(
  drop: unknown,
  role: "containers" | "initContainers" | "ephemeralContainers" = "containers",
): Obj {
  const spec = safePodSpec();
  const c = safeK8sContainer(role === "containers" ? "task" : "extra");
  c.securityContext = {
    ...(c.securityContext as Obj),
    capabilities: drop === undefined ? undefined : { drop },
  };
  if (role === "containers") spec.containers = [c];
  else spec[role] = [c];
  return spec;
}
const pod = (kind: string, drop: unknown, config?: object) =>
  validate(carrier(kind).type, carrier(kind).build(podSpec(drop)), cfg(config));

async function scanned(files: Record<string, string>, name: string, config?: object) {
  const dir = tempFiles({
    ...files,
    ...(config === undefined ? {} : { "cfg.json": JSON.stringify({ [RULE]: config }) }),
  });
  const args = [Object.keys(files)[0] as string, ...(config === undefined ? [] : ["--config", "cfg.json"])];
  const { report } = await scanJson(args, undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return {
    rules: rulesOf(report, name),
    messages: violationsOf(report, name).filter((m) => m.startsWith(RULE)),
  };
}
const compose = (...lines: string[]) =>
  [
    "services:",
    "  app:",
    ...["image: sandbox-busybox:1", 'user: "1000:1000"', "security_opt: [no-new-privileges]", ...lines].map(
      (l) => `    ${l}`,
    ),
    "",
  ].join("\n");
const body = (capDrop: unknown) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: { CapDrop: capDrop, SecurityOpt: ["no-new-privileges"] },
  });
const manifest = (drop: unknown) =>
  JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec: podSpec(drop) });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it.each([
    ["no capabilities", undefined, KEEPS_SIX],
    ["an empty drop list", [], KEEPS_SIX],
    ["only NET_ADMIN", ["NET_ADMIN"], "; it keeps [NET_RAW, MKNOD, SYS_CHROOT, SETFCAP, SETPCAP]"],
    ["five of the six", SIX.filter((c) => c !== "MKNOD"), "; it keeps [MKNOD]"],
  ])("refuses docker.Container with %s", (_, drops, tail) => {
    expect(mine(docker(drops))).toEqual([`container "fixture" does not drop ALL capabilities${tail}`]);
  });

  it.each(KINDS)("refuses a %s with no drop list or one without ALL, naming where", (kind) => {
    const at = `${carrier(kind).specPath.join(".")}.containers[0]`;
    expect(mine(pod(kind, undefined))).toEqual([
      `container "task" does not drop ALL capabilities${KEEPS_SIX} [${at}]`,
    ]);
    expect(mine(pod(kind, ["NET_RAW"]))).toEqual([
      `container "task" does not drop ALL capabilities; it keeps [MKNOD, SYS_CHROOT, SETFCAP, SETPCAP, NET_ADMIN] [${at}]`,
    ]);
  });

  it.each([["CAP_ALL"], [" ALL"], ["ALL "]])(
    "refuses a Kubernetes drop of %j, which containerd reads as no capability",
    (entry) => {
      expect(mine(pod("Pod", [entry]))).toEqual([
        `container "task" does not drop ALL capabilities${KEEPS_SIX}; on Kubernetes the container runtime reads ${JSON.stringify(entry)} as no capability (containerd prefixes CAP_ itself and does not trim, and the name must be exact), so that entry drops nothing [spec.containers[0]]`,
      ]);
    },
  );

  it("refuses the six spelled with CAP_ on Kubernetes, where those entries drop nothing", () => {
    const drop = SIX.map((c) => `CAP_${c}`);
    expect(mine(pod("Deployment", drop))).toEqual([expect.stringContaining(`${KEEPS_SIX}; on Kubernetes`)]);
  });

  it.each(["initContainers", "ephemeralContainers"] as const)(
    "refuses a container in %s without ALL",
    (role) => {
      const o = validate(carrier("Pod").type, carrier("Pod").build(podSpec([], role)));
      expect(mine(o)).toEqual([
        expect.stringMatching(/^(init|ephemeral) container "extra" does not drop ALL/),
      ]);
    },
  );

  it.each([
    ["Compose without cap_drop", { "compose.yaml": compose() }, "app", KEEPS_SIX],
    [
      "Compose cap_drop [NET_RAW]",
      { "compose.yaml": compose("cap_drop: [NET_RAW]") },
      "app",
      "; it keeps [MKNOD",
    ],
    [
      "an Engine body's CapDrop",
      { "body.json": body(["cap_net_admin"]) },
      "container#1",
      "; it keeps [NET_RAW, MKNOD, SYS_CHROOT, SETFCAP, SETPCAP]",
    ],
    ["a Kubernetes manifest's CAP_ALL", { "pod.yaml": manifest(["CAP_ALL"]) }, "task", "drops nothing"],
  ])("scan refuses %s", async (_, files, name, part) => {
    expect((await scanned(files, name)).messages).toEqual([expect.stringContaining(part)]);
  });

  it.each([
    [["ALL"]],
    [["all"]],
    [["All"]],
    [["cap_net_raw", "mknod", "CAP_SYS_CHROOT", "Setfcap", "SETPCAP", "net_admin"]],
  ])("passes docker.Container drops %j (Docker upper-cases and takes CAP_)", (drops) => {
    expect(violated(docker(drops))).not.toContain(RULE);
  });

  it.each([[["ALL"]], [["all"]], [["NET_BIND_SERVICE", "ALL"]], [SIX], [SIX.map((c) => c.toLowerCase())]])(
    "passes a Kubernetes drop list %j",
    (drop) => {
      for (const kind of KINDS) expect(violated(pod(kind, drop)), kind).not.toContain(RULE);
    },
  );

  it.each([
    ["Compose cap_drop [ALL]", { "compose.yaml": compose("cap_drop: [ALL]") }, "app"],
    ["Compose's six", { "compose.yaml": compose(`cap_drop: [${SIX.join(", ")}]`) }, "app"],
    ["an Engine CapDrop [all]", { "body.json": body(["all"]) }, "container#1"],
    ["a Kubernetes drop [all]", { "pod.yaml": manifest(["all"]) }, "task"],
  ])("scan passes %s", async (_, files, name) => {
    expect((await scanned(files, name)).rules).not.toContain(RULE);
  });

  it("acceptSeedSix: false requires ALL itself", async () => {
    const config = { acceptSeedSix: false };
    expect(mine(docker(SIX, config))).toEqual([`container "fixture" does not drop ALL capabilities`]);
    expect(mine(pod("Job", SIX, config))).toHaveLength(1);
    expect(violated(pod("Job", ["ALL"], config))).not.toContain(RULE);
    expect(
      (await scanned({ "compose.yaml": compose(`cap_drop: [${SIX.join(", ")}]`) }, "app", config)).rules,
    ).toContain(RULE);
  });

  it("exactNames counts only ALL (and the six) spelled exactly", async () => {
    const config = { exactNames: true };
    expect(violated(pod("Pod", ["ALL"], config))).not.toContain(RULE);
    expect(violated(pod("Pod", SIX, config))).not.toContain(RULE);
    expect(mine(pod("Pod", ["all"], config))).toEqual([
      `container "task" drops ALL spelled "all": the container runtime reads it as ALL and keeps no capability, but exactNames compares the exact string "ALL", as Pod Security's restricted check does (which refuses such a pod); write ALL [spec.containers[0]]`,
    ]);
    // containerd upper-cases `net_raw`: it is dropped, only its spelling is refused.
    expect(mine(pod("Pod", ["net_raw", ...SIX.slice(1)], config))).toEqual([
      `container "task" does not drop ALL capabilities; it drops [NET_RAW] spelled otherwise than the exact upper-case names exactNames compares, as Pod Security does [spec.containers[0]]`,
    ]);
    // `CAP_ALL` drops nothing on Kubernetes: the six are kept.
    expect(mine(pod("Pod", ["CAP_ALL"], config))).toEqual([expect.stringContaining(KEEPS_SIX)]);
    expect((await scanned({ "pod.yaml": manifest(["all"]) }, "task", config)).rules).toContain(RULE);
  });

  it("notes, without refusing, a drop list not known until the update", () => {
    for (const o of [
      docker(UNKNOWN_WIRE),
      docker(["NET_RAW", UNKNOWN_WIRE]),
      pod("Pod", UNKNOWN_WIRE),
      pod("Job", [UNKNOWN_WIRE]),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("passes, without a note, a known ALL beside an entry not known yet", () => {
    for (const o of [docker(["ALL", UNKNOWN_WIRE]), pod("Deployment", [UNKNOWN_WIRE, "ALL"])]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).not.toContain(RULE);
    }
  });
});
