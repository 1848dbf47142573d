/**
 * sandbox-require-drop-net-admin (mission): every container (init and ephemeral too) drops NET_ADMIN, by name or
 * through ALL, in a spelling the runtime honours (Docker: any case, `CAP_` optional; Kubernetes/containerd: `ALL` in
 * any case or the bare name, so `CAP_NET_ADMIN`, `CAP_ALL` and ` NET_ADMIN` drop nothing), and never adds NET_ADMIN
 * or ALL back: an add after a drop of ALL grants it in Docker and in containerd alike. The fix appends NET_ADMIN to
 * the drops and takes NET_ADMIN out of the adds.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, remediateThenValidate, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-drop-net-admin";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
const MUST = "its drop list must contain NET_ADMIN or ALL";

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const dockerProps = (drops: unknown, adds?: unknown) => ({
  ...safeContainer(),
  capabilities: drops === undefined && adds === undefined ? undefined : { drops, adds },
});
const docker = (drops: unknown, adds?: unknown) => validate(DOCKER, dockerProps(drops, adds));
function podSpec(
  drop: unknown,
  add?: unknown,
  role: "containers" | "initContainers" | "ephemeralContainers" = "containers",
): Obj {
  const spec = safePodSpec();
  const c = safeK8sContainer(role === "containers" ? "task" : "extra");
  const capabilities = drop === undefined && add === undefined ? undefined : { drop, add };
  c.securityContext = { ...(c.securityContext as Obj), capabilities };
  if (role === "containers") spec.containers = [c];
  else spec[role] = [c];
  return spec;
}
const pod = (kind: string, drop: unknown, add?: unknown) =>
  validate(carrier(kind).type, carrier(kind).build(podSpec(drop, add)));

async function scanned(files: Record<string, string>, name: string) {
  const dir = tempFiles(files);
  const { report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
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
const body = (hc: Obj) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: { SecurityOpt: ["no-new-privileges"], ...hc },
  });
const manifest = (drop: unknown, add?: unknown) =>
  JSON.stringify({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "task" },
    spec: { backoffLimit: 0, template: { spec: podSpec(drop, add) } },
  });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it.each([
    ["no capabilities", undefined, `drops nothing; ${MUST}`],
    ["an empty drop list", [], `drops nothing; ${MUST}`],
    ["a drop list without it", ["NET_RAW", " MKNOD "], `drops only [NET_RAW, MKNOD]; ${MUST}`],
  ])("refuses docker.Container with %s", (_, drops, said) => {
    expect(mine(docker(drops))).toEqual([`container "fixture" ${said}`]);
  });

  it.each([
    [["NET_ADMIN"], ["ALL"], "NET_ADMIN"],
    [["cap_net_admin"], ["ALL"], "cap_net_admin"],
    [[" Net_Admin "], ["NET_ADMIN"], "Net_Admin"],
    [["ALL"], ["NET_ADMIN"], "ALL"],
  ])("refuses docker.Container adds %j even with drops %j", (adds, drops, shown) => {
    expect(mine(docker(drops, adds))).toEqual([
      `container "fixture" adds ${shown} back, which grants NET_ADMIN whatever it drops`,
    ]);
  });

  it.each(KINDS)("refuses a %s that drops nothing or adds NET_ADMIN back, naming where", (kind) => {
    const at = `${carrier(kind).specPath.join(".")}.containers[0]`;
    expect(mine(pod(kind, undefined))).toEqual([`container "task" drops nothing; ${MUST} [${at}]`]);
    expect(mine(pod(kind, ["NET_RAW"]))).toEqual([`container "task" drops only [NET_RAW]; ${MUST} [${at}]`]);
    expect(mine(pod(kind, ["ALL"], ["NET_ADMIN"]))).toEqual([
      `container "task" adds NET_ADMIN back, which grants NET_ADMIN whatever it drops [${at}]`,
    ]);
  });

  it.each([["CAP_NET_ADMIN"], ["CAP_ALL"], [" NET_ADMIN"], [" ALL"]])(
    "refuses a Kubernetes drop of %j, which containerd reads as no capability",
    (entry) => {
      expect(mine(pod("Pod", [entry]))).toEqual([
        `container "task" drops only [${entry.trim()}]; ${MUST}; on Kubernetes the container runtime reads ${JSON.stringify(entry)} as no capability (containerd prefixes CAP_ itself and does not trim, and the name must be exact), so that entry drops nothing [spec.containers[0]]`,
      ]);
    },
  );

  it.each(["initContainers", "ephemeralContainers"] as const)(
    "refuses a container in %s that keeps NET_ADMIN",
    (role) => {
      const o = validate(carrier("Pod").type, carrier("Pod").build(podSpec([], undefined, role)));
      expect(mine(o)).toEqual([expect.stringMatching(/^(init|ephemeral) container "extra" drops nothing/)]);
    },
  );

  it.each([
    ["Compose without cap_drop", { "compose.yaml": compose() }, "app", /drops nothing/],
    [
      "Compose cap_add NET_ADMIN",
      { "compose.yaml": compose("cap_drop: [ALL]", "cap_add: [NET_ADMIN]") },
      "app",
      /adds NET_ADMIN back/,
    ],
    [
      "an Engine CapDrop without it",
      { "body.json": body({ CapDrop: ["NET_RAW"] }) },
      "container#1",
      /drops only \[NET_RAW\]/,
    ],
    [
      "an Engine CapAdd ALL",
      { "body.json": body({ CapDrop: ["ALL"], CapAdd: ["ALL"] }) },
      "container#1",
      /adds ALL back/,
    ],
    [
      "a Kubernetes CAP_NET_ADMIN drop",
      { "job.yaml": manifest(["CAP_NET_ADMIN"]) },
      "task",
      /drops only \[CAP_NET_ADMIN\]/,
    ],
    ["a Kubernetes add", { "job.yaml": manifest(["ALL"], ["net_admin"]) }, "task", /adds net_admin back/],
  ])("scan refuses %s", async (_, files, name, re) => {
    expect((await scanned(files, name)).messages).toEqual([expect.stringMatching(re)]);
  });

  it.each([
    [["NET_ADMIN"]],
    [["net_admin"]],
    [["CAP_NET_ADMIN"]],
    [["Net_Admin"]],
    [["all"]],
    [["NET_RAW", "cap_net_admin"]],
  ])("passes docker.Container drops %j (Docker's reading)", (drops) => {
    expect(violated(docker(drops))).not.toContain(RULE);
  });

  it.each([[["NET_ADMIN"]], [["net_admin"]], [["all"]], [["ALL"]], [["NET_RAW", "NET_ADMIN"]]])(
    "passes a Kubernetes drop list %j (containerd's reading)",
    (drop) => {
      for (const kind of KINDS) expect(violated(pod(kind, drop)), kind).not.toContain(RULE);
    },
  );

  it("passes adds of other capabilities after a drop of ALL", async () => {
    expect(violated(docker(["ALL"], ["NET_BIND_SERVICE", "NET_RAW", "NET_BROADCAST"]))).not.toContain(RULE);
    expect(violated(pod("Deployment", ["ALL"], ["NET_BIND_SERVICE"]))).not.toContain(RULE);
    expect(
      (await scanned({ "compose.yaml": compose("cap_drop: [ALL]", "cap_add: [NET_BIND_SERVICE]") }, "app"))
        .rules,
    ).not.toContain(RULE);
    expect(
      (await scanned({ "body.json": body({ CapDrop: ["cap_net_admin"] }) }, "container#1")).rules,
    ).not.toContain(RULE);
    expect((await scanned({ "job.yaml": manifest(["net_admin"]) }, "task")).rules).not.toContain(RULE);
  });

  it("remediates by appending NET_ADMIN to the drops and taking it out of the adds", () => {
    const d = remediateThenValidate(DOCKER, dockerProps(["NET_RAW"], ["NET_ADMIN", "NET_BIND_SERVICE"]));
    expect((d.props as Obj).capabilities).toEqual({
      drops: ["NET_RAW", "NET_ADMIN"],
      adds: ["NET_BIND_SERVICE"],
    });
    expect(violated(d.outcome)).not.toContain(RULE);
    const k = remediateThenValidate(carrier("Pod").type, carrier("Pod").build(podSpec(["CAP_NET_ADMIN"])));
    const c = ((k.props as Obj).spec as { containers: Obj[] }).containers[0] as Obj;
    expect((c.securityContext as { capabilities: Obj }).capabilities.drop).toEqual([
      "CAP_NET_ADMIN",
      "NET_ADMIN",
    ]);
    expect(violated(k.outcome)).not.toContain(RULE);
  });

  it("notes, without refusing, a drop or add list not known until the update", () => {
    for (const o of [
      docker(UNKNOWN_WIRE),
      docker(["ALL"], UNKNOWN_WIRE),
      pod("Pod", [UNKNOWN_WIRE]),
      pod("Job", ["NET_ADMIN"], UNKNOWN_WIRE),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses a known add of NET_ADMIN beside a drop list not known yet", () => {
    expect(mine(docker(UNKNOWN_WIRE, ["NET_ADMIN"]))).toEqual([
      `container "fixture" adds NET_ADMIN back, which grants NET_ADMIN whatever it drops`,
    ]);
    expect(mine(pod("Deployment", UNKNOWN_WIRE, ["ALL"]))).toEqual([expect.stringMatching(/adds ALL back/)]);
  });
});
