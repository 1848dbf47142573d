/**
 * sandbox-require-readonly-rootfs (advisory by default): every container, init and ephemeral ones included, runs
 * with a read-only root filesystem (Docker `readOnly`, the Engine's `HostConfig.ReadonlyRootfs`, Compose
 * `read_only`, Kubernetes `securityContext.readOnlyRootFilesystem`). Absent is writable. Its remediation sets the
 * flag where the front spells it.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, remediateThenValidate, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-readonly-rootfs";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
function dockerProps(readOnly: unknown): Obj {
  const props: Obj = { ...safeContainer(), readOnly };
  if (readOnly === undefined) delete props.readOnly;
  return props;
}
const docker = (readOnly: unknown) => validate(DOCKER, dockerProps(readOnly));
/** A hardened pod spec whose container list `list` holds one container with `readOnlyRootFilesystem: ro`. */
function podSpec(ro: unknown, list = "containers", name = "task"): Obj {
  const spec = safePodSpec();
  const c = { ...safeK8sContainer(name) };
  const sc: Obj = { ...(c.securityContext as Obj), readOnlyRootFilesystem: ro };
  if (ro === undefined) delete sc.readOnlyRootFilesystem;
  c.securityContext = sc;
  if (list === "ephemeralContainers") delete c.resources;
  if (list === "containers") spec.containers = [c];
  else spec[list] = [c];
  return spec;
}
const pod = (kind: string, spec: Obj) => validate(carrier(kind).type, carrier(kind).build(spec));

async function scanned(files: Record<string, string>, name: string) {
  const dir = tempFiles(files);
  const { code, report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  const findings = report.findings.filter(
    (f) => f.ruleId === RULE && f.resource.name === name && !f.unchecked,
  );
  return {
    code,
    rules: rulesOf(report, name),
    messages: violationsOf(report, name).filter((m) => m.startsWith(RULE)),
    findings,
  };
}
const HARDENED = [
  "image: sandbox-busybox@sha256:0a0ca1b8c1f8d2b8ad6a2e4b4b0a3f2b0f45c1c6c3e8a1d1b7a9e5d3c2b1a0f9",
  'user: "1000:1000"',
  "cap_drop: [ALL]",
  'security_opt: ["no-new-privileges:true"]',
  "network_mode: none",
  "mem_limit: 512m",
  "memswap_limit: 512m",
  "cpus: '1'",
  "pids_limit: 128",
  'restart: "no"',
];
const compose = (...lines: string[]) =>
  ["services:", "  app:", ...[...HARDENED, ...lines].map((l) => `    ${l}`), ""].join("\n");
const body = (hc: Obj) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: { SecurityOpt: ["no-new-privileges"], ...hc },
  });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(docker(true))).not.toContain(RULE);
    for (const kind of KINDS) expect(violated(pod(kind, safePodSpec())), kind).not.toContain(RULE);
  });

  it.each([
    ["readOnly: false", false],
    ["no readOnly", undefined],
  ])("refuses docker.Container with %s", (_, ro) => {
    expect(mine(docker(ro))).toEqual(['container "fixture" has a writable root filesystem']);
  });

  it.each(KINDS)("refuses a %s whose container says false or nothing, naming where it is", (kind) => {
    const at = `${carrier(kind).specPath.join(".")}.containers[0]`;
    for (const ro of [false, undefined])
      expect(mine(pod(kind, podSpec(ro)))).toEqual([
        `container "task" has a writable root filesystem [${at}]`,
      ]);
  });

  it.each([
    [
      "an init container",
      "initContainers",
      /^init container "extra" has a writable root filesystem \[spec\.initContainers\[0\]\]$/,
    ],
    [
      "an ephemeral container",
      "ephemeralContainers",
      /^ephemeral container "extra" has a writable root filesystem \[spec\.ephemeralContainers\[0\]\]$/,
    ],
  ])("refuses a Pod with %s that writes its root filesystem, beside a read-only container", (_, list, re) => {
    const spec = { ...podSpec(false, list, "extra"), containers: [safeK8sContainer()] };
    expect(mine(pod("Pod", spec))).toEqual([expect.stringMatching(re)]);
  });

  it("names each writable container of a pod", () => {
    const spec = safePodSpec();
    spec.containers = [
      safeK8sContainer("a"),
      { ...safeK8sContainer("b"), securityContext: { runAsNonRoot: true } },
      { name: "c", image: "x" },
    ];
    expect(mine(pod("Pod", spec))).toEqual([
      expect.stringMatching(/container "b"/),
      expect.stringMatching(/container "c"/),
    ]);
  });

  it("is advisory: scan reports a writable Compose service but does not fail on it alone", async () => {
    const { code, messages, findings } = await scanned({ "compose.yaml": compose() }, "app");
    expect(messages).toEqual([`${RULE}: container "app" has a writable root filesystem`]);
    expect(findings.map((f) => f.level)).toEqual(["advisory"]);
    expect(code).toBe(0);
    const ok = await scanned({ "compose.yaml": compose("read_only: true") }, "app");
    expect(ok.rules).not.toContain(RULE);
  });

  it.each([
    ["read_only: false", { "compose.yaml": compose("read_only: false") }, "app"],
    ["ReadonlyRootfs: false", { "body.json": body({ ReadonlyRootfs: false }) }, "container#1"],
    ["no ReadonlyRootfs", { "body.json": body({}) }, "container#1"],
    [
      "a Kubernetes Job without readOnlyRootFilesystem",
      {
        "job.yaml": JSON.stringify({
          apiVersion: "batch/v1",
          kind: "Job",
          metadata: { name: "task" },
          spec: { template: { spec: podSpec(undefined) } },
        }),
      },
      "task",
    ],
  ])("scan refuses %s", async (_, files, name) => {
    expect((await scanned(files, name)).rules).toContain(RULE);
  });

  it("scan passes an Engine API body and a Kubernetes Pod that are read-only", async () => {
    expect(
      (await scanned({ "body.json": body({ ReadonlyRootfs: true }) }, "container#1")).rules,
    ).not.toContain(RULE);
    const manifest = JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "task" },
      spec: safePodSpec(),
    });
    expect((await scanned({ "pod.yaml": manifest }, "task")).rules).not.toContain(RULE);
  });

  it("passes a read-only root filesystem with writable tmpfs and emptyDir mounts beside it", () => {
    expect(
      violated(
        validate(DOCKER, { ...dockerProps(true), tmpfs: { "/tmp": "size=64m", "/var/cache": "size=8m" } }),
      ),
    ).not.toContain(RULE);
    const spec = podSpec(true);
    spec.volumes = [...(spec.volumes as Obj[]), { name: "cache", emptyDir: {} }];
    expect(violated(pod("Deployment", spec))).not.toContain(RULE);
  });

  it("notes, without refusing, a flag not known until the update", () => {
    for (const o of [
      docker(UNKNOWN_WIRE),
      pod("Pod", podSpec(UNKNOWN_WIRE)),
      pod("Job", podSpec(UNKNOWN_WIRE)),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("remediates by setting the flag where each front spells it, and the result passes", () => {
    const d = remediateThenValidate(DOCKER, dockerProps(false), { selection: { only: [RULE] } });
    expect((d.props as Obj).readOnly).toBe(true);
    expect(violated(d.outcome)).not.toContain(RULE);
    const k = remediateThenValidate(carrier("Job").type, carrier("Job").build(podSpec(undefined)), {
      selection: { only: [RULE] },
    });
    const c = ((((k.props as Obj).spec as Obj).template as Obj).spec as Obj).containers as Obj[];
    expect(((c[0] as Obj).securityContext as Obj).readOnlyRootFilesystem).toBe(true);
    expect(violated(k.outcome)).not.toContain(RULE);
  });

  it("leaves a flag not known yet to the update: no remediation", () => {
    const { props } = remediateThenValidate(DOCKER, dockerProps(UNKNOWN_WIRE), {
      selection: { only: [RULE] },
    });
    expect((props as Obj).readOnly).toBe(UNKNOWN_WIRE);
  });
});
