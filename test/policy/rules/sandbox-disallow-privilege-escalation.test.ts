/**
 * sandbox-disallow-privilege-escalation: every container blocks privilege escalation. Kubernetes: the kubelet sets
 * no_new_privs only for `allowPrivilegeEscalation: false` (absent means allowed). Docker: `no-new-privileges` in
 * securityOpts, bare or with a value Go's ParseBool reads as true, the last one winning as in the daemon's
 * parseSecurityOpt. `privileged` and an added SYS_ADMIN (or ALL) imply escalation whatever the flag says. The fix sets
 * the flag, never next to privileged or SYS_ADMIN, which the API refuses.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, remediateThenValidate, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-privilege-escalation";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
type Role = "containers" | "initContainers" | "ephemeralContainers";

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: Obj) => validate(DOCKER, { ...safeContainer(), ...props });
const opts = (...securityOpts: unknown[]) => docker({ securityOpts });
const withSc = (c: Obj, sc: Obj) => ({ ...c, securityContext: { ...(c.securityContext as Obj), ...sc } });
function podSpec(sc: Obj, role: Role = "containers"): Obj {
  const spec = safePodSpec();
  const c = withSc(safeK8sContainer(role === "containers" ? "task" : "extra"), sc);
  if (role === "containers") spec.containers = [c];
  else spec[role] = [c];
  return spec;
}
const pod = (kind: string, sc: Obj, role: Role = "containers") =>
  validate(carrier(kind).type, carrier(kind).build(podSpec(sc, role)));
const NO_FLAG = { allowPrivilegeEscalation: undefined };

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
    ...["image: sandbox-busybox:1", 'user: "1000:1000"', "cap_drop: [ALL]", ...lines].map((l) => `    ${l}`),
    "",
  ].join("\n");
const body = (hc: Obj) =>
  JSON.stringify({ Image: "sandbox-busybox:1", User: "1000:1000", HostConfig: { CapDrop: ["ALL"], ...hc } });
const manifest = (sc: Obj) =>
  JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec: podSpec(sc) });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it.each([
    ["no securityOpts", undefined],
    ["an empty list", []],
    ["other options only", ["seccomp=unconfined", "label=disable"]],
    ["no-new-privileges:false", ["no-new-privileges:false"]],
    ["no-new-privileges=false", ["no-new-privileges=false"]],
    ["no-new-privileges=0", ["no-new-privileges=0"]],
    ["true then false (the last wins)", ["no-new-privileges:true", "no-new-privileges:false"]],
  ])("refuses docker.Container securityOpts with %s", (_, securityOpts) => {
    expect(mine(docker({ securityOpts }))).toEqual([
      `container "fixture" does not set no-new-privileges in securityOpts`,
    ]);
  });

  it.each([
    ["privileged", { privileged: true }, "runs privileged, which always allows privilege escalation"],
    ["SYS_ADMIN added", { capabilities: { adds: ["SYS_ADMIN"], drops: ["ALL"] } }, "adds SYS_ADMIN"],
    ["cap_sys_admin added", { capabilities: { adds: ["cap_sys_admin"], drops: ["ALL"] } }, "adds SYS_ADMIN"],
    ["ALL added", { capabilities: { adds: ["ALL"] } }, "adds SYS_ADMIN"],
  ])("refuses a docker.Container with no-new-privileges and %s", (_, props, what) => {
    expect(mine(docker(props))).toEqual([expect.stringContaining(`container "fixture" ${what}`)]);
  });

  it.each(KINDS)("refuses a %s whose container leaves allowPrivilegeEscalation unset or true", (kind) => {
    const at = `${carrier(kind).specPath.join(".")}.containers[0]`;
    expect(mine(pod(kind, NO_FLAG))).toEqual([
      `container "task" does not set allowPrivilegeEscalation: false [${at}]`,
    ]);
    expect(mine(pod(kind, { allowPrivilegeEscalation: true }))).toEqual([
      `container "task" does not set allowPrivilegeEscalation: false (it is true) [${at}]`,
    ]);
  });

  it.each([
    ["privileged", { privileged: true }, /runs privileged, which always allows/],
    ["CAP_SYS_ADMIN added", { capabilities: { drop: ["ALL"], add: ["CAP_SYS_ADMIN"] } }, /adds SYS_ADMIN/],
    ["SYS_ADMIN added", { capabilities: { drop: ["ALL"], add: ["SYS_ADMIN"] } }, /adds SYS_ADMIN/],
  ])("refuses a Kubernetes container with allowPrivilegeEscalation: false and %s", (_, sc, re) => {
    for (const kind of KINDS) expect(mine(pod(kind, sc)), kind).toEqual([expect.stringMatching(re)]);
  });

  it.each(["initContainers", "ephemeralContainers"] as const)(
    "refuses a container in %s without the flag",
    (role) => {
      expect(mine(pod("Pod", NO_FLAG, role))).toEqual([
        expect.stringMatching(
          /^(init|ephemeral) container "extra" does not set allowPrivilegeEscalation: false/,
        ),
      ]);
    },
  );

  it.each([
    ["Compose without security_opt", { "compose.yaml": compose() }, "app"],
    [
      "Compose no-new-privileges:false",
      { "compose.yaml": compose("security_opt: [no-new-privileges:false]") },
      "app",
    ],
    [
      "Compose privileged",
      { "compose.yaml": compose("privileged: true", "security_opt: [no-new-privileges]") },
      "app",
    ],
    ["an Engine body without SecurityOpt", { "body.json": body({}) }, "container#1"],
    [
      "an Engine body with no-new-privileges=false",
      { "body.json": body({ SecurityOpt: ["no-new-privileges=false"] }) },
      "container#1",
    ],
    [
      "an Engine body adding SYS_ADMIN",
      { "body.json": body({ SecurityOpt: ["no-new-privileges"], CapAdd: ["SYS_ADMIN"] }) },
      "container#1",
    ],
    ["a Kubernetes Pod without the flag", { "pod.yaml": manifest(NO_FLAG) }, "task"],
    [
      "a Kubernetes Pod with allowPrivilegeEscalation: true",
      { "pod.yaml": manifest({ allowPrivilegeEscalation: true }) },
      "task",
    ],
  ])("scan refuses %s", async (_, files, name) => {
    expect((await scanned(files, name)).messages).toHaveLength(1);
  });

  it.each([
    ["bare", ["no-new-privileges"]],
    [":true", ["no-new-privileges:true"]],
    ["=true", ["no-new-privileges=true"]],
    ["=1 (ParseBool)", ["no-new-privileges=1"]],
    ["false then true (the last wins)", ["no-new-privileges=false", "no-new-privileges=true"]],
    ["beside other options", ["seccomp=unconfined", "no-new-privileges"]],
  ])("passes docker.Container no-new-privileges %s", (_, securityOpts) => {
    expect(violated(docker({ securityOpts }))).not.toContain(RULE);
  });

  it("passes a container that adds a capability other than SYS_ADMIN while blocking escalation", () => {
    expect(violated(docker({ capabilities: { adds: ["NET_BIND_SERVICE"], drops: ["ALL"] } }))).not.toContain(
      RULE,
    );
    for (const kind of KINDS)
      expect(
        violated(pod(kind, { capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE", "SYS_PTRACE"] } })),
        kind,
      ).not.toContain(RULE);
  });

  it.each([
    [
      "Compose no-new-privileges:true",
      { "compose.yaml": compose("security_opt: [no-new-privileges:true]") },
      "app",
    ],
    [
      "an Engine body with no-new-privileges",
      { "body.json": body({ SecurityOpt: ["no-new-privileges"] }) },
      "container#1",
    ],
    ["a Kubernetes Pod with the flag false", { "pod.yaml": manifest({}) }, "task"],
  ])("scan passes %s", async (_, files, name) => {
    expect((await scanned(files, name)).rules).not.toContain(RULE);
  });

  it("remediates by setting the flag, and leaves privileged containers to a person", () => {
    const d = remediateThenValidate(DOCKER, { ...safeContainer(), securityOpts: ["seccomp=unconfined"] });
    expect((d.props as Obj).securityOpts).toEqual(["seccomp=unconfined", "no-new-privileges:true"]);
    expect(violated(d.outcome)).not.toContain(RULE);
    const k = remediateThenValidate(carrier("Job").type, carrier("Job").build(podSpec(NO_FLAG)));
    const c = ((((k.props as Obj).spec as Obj).template as Obj).spec as { containers: Obj[] })
      .containers[0] as Obj;
    expect((c.securityContext as Obj).allowPrivilegeEscalation).toBe(false);
    expect(violated(k.outcome)).not.toContain(RULE);
    const p = remediateThenValidate(
      carrier("Pod").type,
      carrier("Pod").build(podSpec({ ...NO_FLAG, privileged: true })),
    );
    expect(violated(p.outcome)).toContain(RULE);
  });

  it("notes, without refusing, a flag or securityOpts not known until the update", () => {
    for (const o of [
      docker({ securityOpts: UNKNOWN_WIRE }),
      opts(UNKNOWN_WIRE),
      opts("seccomp=unconfined", UNKNOWN_WIRE),
      pod("Pod", { allowPrivilegeEscalation: UNKNOWN_WIRE }),
      pod("Deployment", { allowPrivilegeEscalation: UNKNOWN_WIRE }),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses privileged or SYS_ADMIN beside a flag not known yet", () => {
    expect(mine(docker({ privileged: true, securityOpts: UNKNOWN_WIRE }))).toEqual([
      expect.stringMatching(/runs privileged/),
    ]);
    expect(
      mine(
        pod("Job", {
          allowPrivilegeEscalation: UNKNOWN_WIRE,
          capabilities: { drop: ["ALL"], add: ["SYS_ADMIN"] },
        }),
      ),
    ).toEqual([expect.stringMatching(/adds SYS_ADMIN/)]);
  });
});
