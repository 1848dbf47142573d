/**
 * sandbox-disallow-privileged: no container runs privileged (every capability, every device, no seccomp or LSM)
 * and no pod or container is a Windows HostProcess container (`windowsOptions.hostProcess: true`, a process on the
 * host itself), on every front: docker.Container `privileged`, Compose `privileged`, the Engine's
 * `HostConfig.Privileged`, a Kubernetes container's `securityContext.privileged` (init and ephemeral too).
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-privileged";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
type Role = "containers" | "initContainers" | "ephemeralContainers";

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: Obj) => validate(DOCKER, { ...safeContainer(), ...props });
/** A hardened pod whose container in `role` gets `sc` merged into its securityContext, and `pod` into the spec. */
function pod(kind: string, sc: Obj, role: Role = "containers", podSpec: Obj = {}): Outcome {
  const spec = { ...safePodSpec(), ...podSpec };
  const c = safeK8sContainer(role === "containers" ? "task" : "extra");
  c.securityContext = { ...(c.securityContext as Obj), ...sc };
  if (role === "containers") spec.containers = [c];
  else spec[role] = [c];
  return validate(carrier(kind).type, carrier(kind).build(spec));
}
const podSc = (kind: string, psc: Obj) =>
  pod(kind, {}, "containers", {
    securityContext: { ...(safePodSpec().securityContext as Obj), ...psc },
  });

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
    ...["image: sandbox-busybox:1", 'user: "1000:1000"', "read_only: true", ...lines].map((l) => `    ${l}`),
    "",
  ].join("\n");
/** An Engine API create body; `hc` is spliced in raw so that key spellings and repeats reach the reader as written. */
const body = (hc: string) =>
  `{"Image":"sandbox-busybox:1","User":"1000:1000","HostConfig":{"ReadonlyRootfs":true,"CapDrop":["ALL"],"SecurityOpt":["no-new-privileges"]${hc === "" ? "" : `,${hc}`}}}`;
const manifest = (sc: Obj) => {
  const c = safeK8sContainer();
  c.securityContext = { ...(c.securityContext as Obj), ...sc };
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "task" },
    spec: { ...safePodSpec(), containers: [c] },
  });
};

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it.each([true, "true"])("refuses docker.Container privileged: %j", (privileged) => {
    expect(mine(docker({ privileged }))).toEqual([`container "fixture" runs privileged`]);
  });

  it.each(KINDS)("refuses a %s whose container runs privileged, naming where", (kind) => {
    const at = carrier(kind).specPath.join(".");
    expect(mine(pod(kind, { privileged: true }))).toEqual([
      `container "task" runs privileged [${at}.containers[0]]`,
    ]);
  });

  it.each([
    ["initContainers", /^init container "extra" runs privileged \[spec\.initContainers\[0\]\]$/],
    [
      "ephemeralContainers",
      /^ephemeral container "extra" runs privileged \[spec\.ephemeralContainers\[0\]\]$/,
    ],
  ] as const)("refuses a privileged container in %s", (role, re) => {
    expect(mine(pod("Pod", { privileged: true }, role))).toEqual([expect.stringMatching(re)]);
  });

  it.each(KINDS)("refuses a %s whose pod or container is a Windows HostProcess container", (kind) => {
    const at = carrier(kind).specPath.join(".");
    expect(mine(podSc(kind, { windowsOptions: { hostProcess: true } }))).toEqual([
      `the pod sets windowsOptions.hostProcess: true: it runs on the Windows host [${at}.securityContext]`,
    ]);
    expect(mine(pod(kind, { windowsOptions: { hostProcess: true } }))).toEqual([
      `container "task" sets windowsOptions.hostProcess: true: it runs on the Windows host [${at}.containers[0]]`,
    ]);
  });

  it("reports each privileged container of a pod once", () => {
    const spec = safePodSpec();
    const a = safeK8sContainer("a");
    const b = safeK8sContainer("b");
    for (const c of [a, b]) c.securityContext = { ...(c.securityContext as Obj), privileged: true };
    spec.containers = [a, b];
    expect(mine(validate(carrier("Pod").type, carrier("Pod").build(spec)))).toHaveLength(2);
  });

  it.each([
    ["Compose privileged: true", { "compose.yaml": compose("privileged: true") }, "app"],
    ["Compose privileged: yes (compose-go's boolean)", { "compose.yaml": compose("privileged: yes") }, "app"],
    ["an Engine body's HostConfig.Privileged", { "body.json": body('"Privileged":true') }, "container#1"],
    [
      "an Engine body's privileged in another case (the daemon's decoder ignores case)",
      { "body.json": body('"privileged":true') },
      "container#1",
    ],
    [
      "the last of repeated Privileged keys, as the daemon reads it",
      { "body.json": body('"Privileged":false,"privileged":true') },
      "container#1",
    ],
    ["a Kubernetes Pod manifest", { "pod.yaml": manifest({ privileged: true }) }, "task"],
    [
      "a Kubernetes HostProcess manifest",
      { "pod.yaml": manifest({ windowsOptions: { hostProcess: true } }) },
      "task",
    ],
  ])("scan refuses %s", async (_, files, name) => {
    const { messages } = await scanned(files, name);
    expect(messages).toEqual([expect.stringMatching(/runs privileged|runs on the Windows host/)]);
  });

  it.each([false, "false", undefined])("passes docker.Container privileged: %j", (privileged) => {
    expect(violated(docker({ privileged }))).not.toContain(RULE);
  });

  it.each([
    ["privileged: false", { privileged: false }],
    ["no privileged field", { privileged: undefined }],
    ["hostProcess: false", { windowsOptions: { hostProcess: false } }],
    [
      "Windows options without hostProcess",
      { windowsOptions: { runAsUserName: "ContainerUser", gmsaCredentialSpecName: "gmsa" } },
    ],
  ])("passes a Kubernetes container with %s", (_, sc) => {
    for (const kind of KINDS) expect(violated(pod(kind, sc)), kind).not.toContain(RULE);
  });

  it("passes a pod-level hostProcess: false", () => {
    expect(violated(podSc("Pod", { windowsOptions: { hostProcess: false } }))).not.toContain(RULE);
  });

  it.each([
    ["Compose privileged: false", { "compose.yaml": compose("privileged: false") }, "app"],
    ["an Engine body without Privileged", { "body.json": body("") }, "container#1"],
    ["an Engine body with Privileged: false", { "body.json": body('"Privileged":false') }, "container#1"],
    [
      "an Engine body whose last Privileged key is false",
      { "body.json": body('"Privileged":true,"privileged":false') },
      "container#1",
    ],
  ])("scan passes %s", async (_, files, name) => {
    expect((await scanned(files, name)).rules).not.toContain(RULE);
  });

  it("notes, without refusing, a privileged flag or hostProcess not known until the update", () => {
    for (const o of [
      docker({ privileged: UNKNOWN_WIRE }),
      pod("Deployment", { privileged: UNKNOWN_WIRE }),
      pod("Job", { windowsOptions: { hostProcess: UNKNOWN_WIRE } }),
      podSc("Pod", { windowsOptions: { hostProcess: UNKNOWN_WIRE } }),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses a privileged container beside a hostProcess not known yet", () => {
    expect(mine(pod("Pod", { privileged: true, windowsOptions: { hostProcess: UNKNOWN_WIRE } }))).toEqual([
      `container "task" runs privileged [spec.containers[0]]`,
    ]);
  });
});
