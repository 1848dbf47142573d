/**
 * sandbox-disallow-unconfined-lsm: AppArmor and SELinux stay on. Docker's daemon reads `--security-opt` as
 * `key=value`, the old `key:value` and the bare `disable` (parseSecurityOpt); Kubernetes takes a container's
 * `appArmorProfile`, else its AppArmor annotation, else the pod's, and a container's `seLinuxOptions` whole, else the
 * pod's. Pod Security baseline compares SELinux types exactly against the container types, user and role empty.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-unconfined-lsm";
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

/** Edits of a hardened pod: its spec, its first container's securityContext and the pod template's annotations. */
type Edit = (spec: Obj, sc: Obj, annotations: Obj) => void;
function podProps(kind: string, edit: Edit): Obj {
  const spec = safePodSpec();
  const annotations: Obj = {};
  edit(spec, ((spec.containers as Obj[])[0] as Obj).securityContext as Obj, annotations);
  const meta = { labels: { "sandbox.role": "task" }, annotations };
  return carrier(kind).build(spec, meta);
}
const kube = (kind: string, edit: Edit, config?: object) =>
  validate(carrier(kind).type, podProps(kind, edit), opts(config));
const podSc = (spec: Obj) => spec.securityContext as Obj;
/** Edits: a field of the container's securityContext, of the pod's, an AppArmor annotation; several at once. */
const ctr =
  (key: string, value: unknown): Edit =>
  (_, sc) =>
    put(sc, key, value);
const pod =
  (key: string, value: unknown): Edit =>
  (s) =>
    put(podSc(s), key, value);
const AA = "container.apparmor.security.beta.kubernetes.io/";
const ann =
  (name: string, value: string): Edit =>
  (_, __, a) =>
    put(a, `${AA}${name}`, value);
const all =
  (...edits: Edit[]): Edit =>
  (s, sc, a) => {
    for (const e of edits) e(s, sc, a);
  };
const UNCONFINED = { type: "Unconfined" };
const DEFAULT = { type: "RuntimeDefault" };

async function scanned(file: string, text: string, name: string): Promise<string[]> {
  const dir = tempFiles({ [file]: text });
  const { report } = await scanJson([file], undefined, dir);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return rulesOf(report, name);
}
const BASE = ["image: x", 'user: "1000:1000"', "read_only: true", "cap_drop: [ALL]", "network_mode: none"];
const compose = (o: string[]) =>
  `services:\n  app:\n${[...BASE, "mem_limit: 1g", "cpus: 1", `security_opt: ${JSON.stringify(["no-new-privileges", ...o])}`].map((l) => `    ${l}`).join("\n")}\n`;
const HC = { CapDrop: ["ALL"], ReadonlyRootfs: true, NetworkMode: "none" };
const LIMITS = { Memory: 1 << 30, NanoCpus: 1e9, PidsLimit: 64 };
const body = (o: string[]) =>
  JSON.stringify({
    Image: "x",
    User: "1000:1000",
    HostConfig: { ...HC, ...LIMITS, SecurityOpt: ["no-new-privileges", ...o] },
  });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS) expect(violated(kube(kind, () => {})), kind).not.toContain(RULE);
  });

  it.each([
    ["apparmor=unconfined", /runs with AppArmor disabled \(securityOpts\)/],
    ["apparmor:unconfined", /AppArmor disabled/],
    ["label=disable", /disables SELinux labeling \(label=disable\)/],
    ["label:disable", /disables SELinux labeling/],
    ["disable", /disables SELinux labeling/],
    ["label=type:spc_t", /sets SELinux type "spc_t", which is not a confined container type/],
    ["label:type:unconfined_t", /SELinux type "unconfined_t"/],
    ["label=user:system_u", /sets the SELinux user "system_u"/],
    ["label=role:system_r", /sets the SELinux role "system_r"/],
  ])("refuses docker.Container securityOpts %s", (opt, re) => {
    const m = mine(docker([opt]));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  const kubeFailing: [string, Edit, RegExp][] = [
    [
      "appArmorProfile Unconfined",
      ctr("appArmorProfile", UNCONFINED),
      /AppArmor disabled \(spec.*appArmorProfile\)/,
    ],
    [
      "the pod's Unconfined, inherited",
      pod("appArmorProfile", UNCONFINED),
      /disabled \(pod securityContext\.appArm/,
    ],
    [
      "an unconfined annotation",
      ann("task", "unconfined"),
      /AppArmor disabled \(annotation container\.apparmor/,
    ],
    [
      "SELinux type spc_t",
      ctr("seLinuxOptions", { type: "spc_t" }),
      /"task" sets SELinux type "spc_t", which is not/,
    ],
    [
      "the pod's SELinux type spc_t, inherited",
      pod("seLinuxOptions", { type: "spc_t" }),
      /SELinux type "spc_t"/,
    ],
    [
      "a type right only once trimmed",
      ctr("seLinuxOptions", { type: " container_t" }),
      /type " container_t"/,
    ],
    ["an SELinux user", ctr("seLinuxOptions", { user: "system_u" }), /sets the SELinux user "system_u"/],
    ["an SELinux role", ctr("seLinuxOptions", { role: "system_r" }), /sets the SELinux role "system_r"/],
  ];

  describe.each(KINDS)("on a %s", (kind) => {
    it.each(kubeFailing)("refuses %s", (_, edit, re) => {
      const m = mine(kube(kind, edit));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
    });
  });

  it.each([
    ["apparmor=docker-default"],
    ["apparmor=sandbox-task"],
    ["label=type:container_t"],
    ["label=level:s0:c100,c200"],
    ["seccomp=unconfined"], // seccomp is sandbox-disallow-unconfined-seccomp's
  ])("passes docker.Container securityOpts %s", (opt) => {
    expect(violated(docker([opt]))).not.toContain(RULE);
  });

  it.each([
    ["appArmorProfile RuntimeDefault", ctr("appArmorProfile", DEFAULT)],
    ["appArmorProfile Localhost", ctr("appArmorProfile", { type: "Localhost", localhostProfile: "task" })],
    ["an AppArmor annotation runtime/default", ann("task", "runtime/default")],
    ["an AppArmor annotation localhost/task", ann("task", "localhost/task")],
    ["SELinux type container_init_t", ctr("seLinuxOptions", { type: "container_init_t" })],
    ["SELinux options with a level only", ctr("seLinuxOptions", { level: "s0:c123,c456" })],
    ["empty SELinux type, user and role", ctr("seLinuxOptions", { type: "", user: "", role: "" })],
    [
      "a pod Unconfined the container overrides",
      all(pod("appArmorProfile", UNCONFINED), ctr("appArmorProfile", DEFAULT)),
    ],
  ])("passes %s", (_, edit) => {
    for (const kind of KINDS) expect(violated(kube(kind, edit)), kind).not.toContain(RULE);
  });

  describe("judgePodLevel", () => {
    const on = { judgePodLevel: true };
    it.each([
      [
        "a pod appArmorProfile Unconfined the container overrides",
        all(pod("appArmorProfile", UNCONFINED), ctr("appArmorProfile", DEFAULT)),
        /the pod's securityContext sets appArmorProfile Unconfined/,
      ],
      [
        "a pod SELinux type spc_t the container overrides",
        all(pod("seLinuxOptions", { type: "spc_t" }), ctr("seLinuxOptions", { type: "container_t" })),
        /the pod's securityContext sets SELinux type "spc_t"/,
      ],
      ["an AppArmor annotation naming no container", ann("gone", "unconfined"), /\/gone is "unconfined"/],
    ])("refuses %s, which is passed without it", (_, edit, re) => {
      expect(violated(kube("Pod", edit))).not.toContain(RULE);
      const m = mine(kube("Pod", edit, on));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
    });

    it("passes pod values that confine, and an orphan annotation that names a profile", () => {
      const se = { type: "container_t", level: "s0:c1,c2" };
      const edit = all(
        pod("appArmorProfile", DEFAULT),
        pod("seLinuxOptions", se),
        ann("gone", "localhost/task"),
      );
      expect(violated(kube("Deployment", edit, on))).not.toContain(RULE);
    });
  });

  describe("allowedSeLinuxTypes", () => {
    const cfg = { allowedSeLinuxTypes: ["container_t", "sandbox_task_t"] };
    it("accepts a listed type and refuses a default one no longer listed", () => {
      const t = (type: string) => ctr("seLinuxOptions", { type });
      expect(violated(kube("Pod", t("sandbox_task_t"), cfg))).not.toContain(RULE);
      expect(violated(docker(["label=type:sandbox_task_t"], cfg))).not.toContain(RULE);
      expect(mine(kube("Pod", t("container_init_t"), cfg))).toEqual([
        expect.stringMatching(/"container_init_t"/),
      ]);
      expect(violated(kube("Pod", t("sandbox_task_t")))).toContain(RULE);
    });
  });

  it.each([
    ["docker.Container securityOpts", () => docker([UNKNOWN_WIRE])],
    ["Kubernetes seLinuxOptions", () => kube("Pod", ctr("seLinuxOptions", UNKNOWN_WIRE))],
    ["Kubernetes appArmorProfile type", () => kube("Job", ctr("appArmorProfile", { type: UNKNOWN_WIRE }))],
    ["an SELinux type", () => kube("Pod", ctr("seLinuxOptions", { type: UNKNOWN_WIRE }))],
  ])("notes %s not known until the update", (_, run) => {
    const o = run();
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });

  it("still refuses a known apparmor=unconfined beside an unknown option", () => {
    expect(violated(docker([UNKNOWN_WIRE, "apparmor=unconfined"]))).toContain(RULE);
  });

  describe("scan", () => {
    it.each([["apparmor=unconfined"], ["label=disable"], ["label:type:spc_t"]])(
      "refuses Compose security_opt %s and the same Engine API SecurityOpt",
      async (opt) => {
        expect(await scanned("compose.yaml", compose([opt]), "app")).toContain(RULE);
        expect(await scanned("body.json", body([opt]), "container#1")).toContain(RULE);
      },
    );

    it("passes Compose and Engine API bodies that name a confining profile", async () => {
      const ok = ["apparmor=docker-default", "label=type:container_t"];
      expect(await scanned("compose.yaml", compose(ok), "app")).not.toContain(RULE);
      expect(await scanned("body.json", body(ok), "container#1")).not.toContain(RULE);
    });

    it("refuses a Job manifest whose pod annotation unconfines the container, passes it with runtime/default", async () => {
      const meta = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "task" } };
      const job = (value: string) => JSON.stringify({ ...podProps("Job", ann("task", value)), ...meta });
      expect(await scanned("job.yaml", job("unconfined"), "task")).toContain(RULE);
      expect(await scanned("job.yaml", job("runtime/default"), "task")).not.toContain(RULE);
    });
  });
});
