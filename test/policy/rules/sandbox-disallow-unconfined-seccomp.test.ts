/**
 * sandbox-disallow-unconfined-seccomp: seccomp is never off. Docker applies its default profile unless a
 * `seccomp=` option replaces it; that option's value is the profile's JSON text, decoded as encoding/json decodes it
 * (keys case-folded, the last repeated key winning) and applied as moby's setupSeccomp applies it. On Kubernetes an
 * absent profile is Unconfined (the kubelet's seccompDefault is off unless its own config says), and the old
 * annotations are ignored since v1.27.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-unconfined-seccomp";
type Obj = Record<string, unknown>;
/** Sets one field (an edit of a fixture). */
const put = (o: Obj, key: string, value: unknown): void => {
  o[key] = value;
};
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object) => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (extra: unknown[], config?: object) =>
  validate(DOCKER, { ...safeContainer(), securityOpts: ["no-new-privileges:true", ...extra] }, opts(config));
const profile = (p: object) => `seccomp=${JSON.stringify(p)}`;
const ERRNO = "SCMP_ACT_ERRNO";
const allow = (names: string[], more: object = {}) => ({ names, action: "SCMP_ACT_ALLOW", ...more });
/** A profile that blocks by default and runs the given syscall rules. */
const errno = (...syscalls: object[]) => profile({ defaultAction: ERRNO, syscalls });
/** An argument condition on the first argument. */
const arg0 = (op: string, value: number, valueTwo = 0) => ({
  index: 0,
  value,
  valueTwo,
  op: `SCMP_CMP_${op}`,
});
const ANN = "container.seccomp.security.alpha.kubernetes.io/task";
/** Only the given annotation, no field. */
const annotated =
  (key: string, value: string): Edit =>
  (s, sc, a) => {
    noField(s, sc, a);
    a[key] = value;
  };

/** Edits of a hardened pod: its spec, its first container's securityContext, the pod template's annotations. */
type Edit = (spec: Obj, sc: Obj, annotations: Obj) => void;
function podProps(kind: string, edit: Edit): Obj {
  const spec = safePodSpec();
  const annotations: Obj = {};
  edit(spec, ((spec.containers as Obj[])[0] as Obj).securityContext as Obj, annotations);
  return carrier(kind).build(spec, { labels: { "sandbox.role": "task" }, annotations });
}
const kube = (kind: string, edit: Edit, config?: object) =>
  validate(carrier(kind).type, podProps(kind, edit), opts(config));
const podSc = (spec: Obj) => spec.securityContext as Obj;
/** No seccompProfile field at either level. */
const noField: Edit = (s, sc) => {
  delete podSc(s).seccompProfile;
  delete sc.seccompProfile;
};

async function scanned(files: Record<string, string>, name: string): Promise<string[]> {
  const dir = tempFiles(files);
  const { report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return rulesOf(report, name);
}
const BASE = ["image: x", 'user: "1000:1000"', "read_only: true", "cap_drop: [ALL]", "network_mode: none"];
const compose = (opts: string[]) =>
  `services:\n  app:\n${[...BASE, "mem_limit: 1g", "cpus: 1", `security_opt: ${JSON.stringify(["no-new-privileges", ...opts])}`].map((l) => `    ${l}`).join("\n")}\n`;
const HC = { CapDrop: ["ALL"], ReadonlyRootfs: true, NetworkMode: "none" };
const LIMITS = { Memory: 1 << 30, NanoCpus: 1e9, PidsLimit: 64 };
const body = (opts: string[]) =>
  JSON.stringify({
    Image: "x",
    User: "1000:1000",
    HostConfig: { ...HC, ...LIMITS, SecurityOpt: ["no-new-privileges", ...opts] },
  });
const CONFINING = { defaultAction: ERRNO, syscalls: [allow(["read", "write", "exit_group"])] };

describe(RULE, () => {
  it("passes the hardened docker.Container (the daemon's default profile) and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS) expect(violated(kube(kind, () => {})), kind).not.toContain(RULE);
  });

  it.each([
    ["seccomp=unconfined", /runs with seccomp disabled \(securityOpts: seccomp=unconfined\)/],
    ["seccomp:unconfined", /seccomp disabled/],
    ["seccomp={}", /names no default action and no syscalls, which the daemon reads as seccomp disabled/],
    ["seccomp=null", /names no default action and no syscalls/],
    [profile({ defaultAction: "SCMP_ACT_ALLOW" }), /defaultAction SCMP_ACT_ALLOW lets every syscall/],
    [profile({ defaultAction: "SCMP_ACT_LOG", syscalls: [allow(["read"])] }), /defaultAction SCMP_ACT_LOG/],
    [profile({ defaultAction: "SCMP_ACT_NOTIFY", listenerPath: "/x.sock" }), /defaultAction SCMP_ACT_NOTIFY/],
    [profile({ syscalls: [allow(["read"])] }), /no default action, so every syscall it does not name/],
    [profile({ DefaultAction: "SCMP_ACT_ALLOW" }), /SCMP_ACT_ALLOW/], // encoding/json folds the key's case
    ['seccomp={"defaultAction":"SCMP_ACT_ERRNO","defaultAction":"SCMP_ACT_ALLOW"}', /SCMP_ACT_ALLOW/],
    [errno(allow(["unshare"])), /lets unshare run without a condition/],
    [errno(allow(["keyctl", "read"])), /lets keyctl run/],
    [errno(allow(["clone"], { args: [arg0("GE", 0)] })), /clone run under conditions that admit every/],
    [errno(allow(["personality"], { args: [arg0("NE", 0)] })), /personality run under conditions other/],
  ])("refuses docker.Container securityOpts %s", (opt, re) => {
    const m = mine(docker([opt]));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["a file path (the daemon reads JSON text)", "seccomp=/etc/docker/seccomp.json", /is not JSON/],
    ["an unknown action", profile({ defaultAction: "SCMP_ACT_BOGUS" }), /knows no seccomp action/],
    ["a field of the wrong type", profile({ defaultAction: 7 }), /cannot decode the seccomp profile/],
  ])("fails closed on a profile the daemon cannot load: %s", (_, opt, re) => {
    const m = mine(docker([opt]));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(/cannot be checked/);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["seccomp=builtin"],
    ["seccomp="],
    [profile(CONFINING)],
    [profile({ defaultAction: "SCMP_ACT_KILL_PROCESS" })],
    [errno(allow(["mount"], { includes: { caps: ["CAP_SYS_ADMIN"] } }))],
    [errno(allow(["clone"], { args: [arg0("MASKED_EQ", 2114060288)] }))], // Docker's own: no namespace flags
    [errno({ names: ["unshare"], action: ERRNO })],
    ["apparmor=unconfined"], // AppArmor is sandbox-disallow-unconfined-lsm's
  ])("passes docker.Container securityOpts %s", (opt) => {
    expect(violated(docker([opt]))).not.toContain(RULE);
  });

  const unconfined = { type: "Unconfined" };
  const inherited: Edit = (s, sc) => {
    delete sc.seccompProfile;
    put(podSc(s), "seccompProfile", unconfined);
  };
  const POD_ANN = "seccomp.security.alpha.kubernetes.io/pod";
  const kubeFailing: [string, Edit, RegExp][] = [
    ["Unconfined", (_, sc) => put(sc, "seccompProfile", unconfined), /"task" runs with seccomp disabled/],
    ["the pod's Unconfined, inherited", inherited, /disabled \(pod securityContext\.seccompProfile\)/],
    ["no profile at either level", noField, /sets no seccomp profile, so it runs Unconfined unless/],
    ["a type that is neither", (_, sc) => put(sc, "seccompProfile", { type: "X" }), /neither RuntimeDefault/],
    [
      "the container annotation alone",
      annotated(ANN, "runtime/default"),
      /annotation .*ignores since v1\.27/,
    ],
    ["the pod annotation alone", annotated(POD_ANN, "docker/default"), /\/pod, which Kubernetes ignores/],
    ["an unconfined annotation", annotated(ANN, "unconfined"), /runs with seccomp disabled \(annotation/],
  ];

  describe.each(KINDS)("on a %s", (kind) => {
    it.each(kubeFailing)("refuses %s", (_, edit, re) => {
      const m = mine(kube(kind, edit));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
    });
  });

  it.each([
    ["the pod's RuntimeDefault, inherited", ((_, sc) => void delete sc.seccompProfile) as Edit],
    [
      "a Localhost profile",
      ((_, sc) => put(sc, "seccompProfile", { type: "Localhost", localhostProfile: "p" })) as Edit,
    ],
    [
      "a pod-level Unconfined the container overrides",
      ((s) => put(podSc(s), "seccompProfile", unconfined)) as Edit,
    ],
  ])("passes %s", (_, edit) => {
    for (const kind of KINDS) expect(violated(kube(kind, edit)), kind).not.toContain(RULE);
  });

  describe("requireExplicit: false (every kubelet runs seccompDefault)", () => {
    const off = { requireExplicit: false };
    it("passes an absent profile and an annotation-only one", () => {
      expect(violated(kube("Pod", noField, off))).not.toContain(RULE);
      expect(violated(kube("Job", annotated(ANN, "runtime/default"), off))).not.toContain(RULE);
    });

    it("still refuses Unconfined", () => {
      expect(violated(kube("Pod", (_, sc) => put(sc, "seccompProfile", unconfined), off))).toContain(RULE);
    });
  });

  it("judgePodLevel refuses a pod-level Unconfined that the container overrides", () => {
    const edit: Edit = (s) => put(podSc(s), "seccompProfile", unconfined);
    expect(mine(kube("Deployment", edit, { judgePodLevel: true }))).toEqual([
      expect.stringMatching(/the pod's securityContext sets seccompProfile Unconfined/),
    ]);
  });

  it.each([
    ["docker.Container securityOpts", () => docker([UNKNOWN_WIRE])],
    [
      "a Kubernetes profile type",
      () => kube("Pod", (_, sc) => put(sc, "seccompProfile", { type: UNKNOWN_WIRE })),
    ],
    ["a whole Kubernetes profile", () => kube("Job", (_, sc) => put(sc, "seccompProfile", UNKNOWN_WIRE))],
  ])("notes %s not known until the update", (_, run) => {
    const o = run();
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });

  it("still refuses a known seccomp=unconfined beside an unknown option", () => {
    expect(violated(docker([UNKNOWN_WIRE, "seccomp=unconfined"]))).toContain(RULE);
  });

  describe("scan", () => {
    it.each([
      ["seccomp=unconfined", "seccomp=unconfined"],
      ["an allow-all profile", profile({ defaultAction: "SCMP_ACT_ALLOW" })],
    ])("refuses %s in a Compose service and in an Engine API body", async (_, opt) => {
      expect(await scanned({ "compose.yaml": compose([opt]) }, "app")).toContain(RULE);
      expect(await scanned({ "body.json": body([opt]) }, "container#1")).toContain(RULE);
    });

    it("reads a Compose profile file as Compose sends it, and judges its content", async () => {
      const project = (p: object) => ({
        "compose.yaml": compose(["seccomp=./p.json"]),
        "p.json": JSON.stringify(p),
      });
      expect(await scanned(project({ defaultAction: "SCMP_ACT_LOG" }), "app")).toContain(RULE);
      expect(await scanned(project(CONFINING), "app")).not.toContain(RULE);
    });

    it("fails closed on a Compose profile file the scan cannot read", async () => {
      expect(await scanned({ "compose.yaml": compose(["seccomp=./missing.json"]) }, "app")).toContain(RULE);
    });

    it("passes a Compose service and a body with no seccomp option or the builtin one", async () => {
      expect(await scanned({ "compose.yaml": compose(["seccomp=builtin"]) }, "app")).not.toContain(RULE);
      expect(await scanned({ "body.json": body([]) }, "container#1")).not.toContain(RULE);
    });

    it("refuses a Pod manifest with no profile, and passes one with RuntimeDefault", async () => {
      const meta = { apiVersion: "v1", kind: "Pod", metadata: { name: "task" } };
      const pod = (edit: Edit) => JSON.stringify({ ...podProps("Pod", edit), ...meta });
      expect(await scanned({ "pod.yaml": pod(noField) }, "task")).toContain(RULE);
      expect(await scanned({ "pod.yaml": pod(() => {}) }, "task")).not.toContain(RULE);
    });
  });
});
