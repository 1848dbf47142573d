/**
 * sandbox-disallow-unmasked-proc: /proc and /sys keep the daemon's protections. No `procMount` but Default
 * (Kubernetes), no `systempaths=unconfined` (the CLI's and Compose's spelling of empty MaskedPaths and
 * ReadonlyPaths), no `writable-cgroups` (any value Go's ParseBool reads as true), and an Engine body's MaskedPaths
 * or ReadonlyPaths list, which replaces the daemon's defaults, keeps each default or a folder that holds it.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-unmasked-proc";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;

/** What the daemon masks and makes read-only when a body gives no list (moby oci.DefaultLinuxSpec). */
const DEFAULT_MASKED_PATHS = [
  "/proc/acpi",
  "/proc/asound",
  "/proc/interrupts",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/sched_debug",
  "/proc/scsi",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/sys/devices/virtual/powercap",
  "/sys/firmware",
];
const DEFAULT_READONLY_PATHS = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"];

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (...opts: unknown[]) =>
  validate(DOCKER, { ...safeContainer(), securityOpts: ["no-new-privileges:true", ...opts] });
/** A hardened pod whose container (or an init container) has `procMount` set. */
function pod(
  kind: string,
  procMount: unknown,
  role: "containers" | "initContainers" = "containers",
): Outcome {
  const spec = safePodSpec();
  const c = safeK8sContainer(role === "containers" ? "task" : "init");
  c.securityContext = { ...(c.securityContext as Obj), procMount };
  if (role === "containers") spec.containers = [c];
  else spec.initContainers = [c];
  return validate(carrier(kind).type, carrier(kind).build(spec));
}

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
const body = (hc: Obj) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: { ReadonlyRootfs: true, SecurityOpt: ["no-new-privileges"], ...hc },
  });
const engine = (hc: Obj) => scanned({ "body.json": body(hc) }, "container#1");

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it("refuses docker.Container securityOpts systempaths=unconfined", () => {
    expect(mine(docker("systempaths=unconfined"))).toEqual([
      `container "fixture" mounts /proc Unmasked: the kernel's masked paths become visible`,
    ]);
  });

  it.each([
    "writable-cgroups",
    "writable-cgroups=true",
    "writable-cgroups=1",
    "writable-cgroups:t",
    "writable-cgroups=True",
  ])("refuses docker.Container securityOpts %s", (opt) => {
    expect(mine(docker(opt))).toEqual([
      `container "fixture" unprotects kernel paths: writable-cgroups makes the cgroup files writable [securityOpts]`,
    ]);
  });

  it.each(KINDS)("refuses a %s whose container or init container sets procMount: Unmasked", (kind) => {
    const at = carrier(kind).specPath.join(".");
    expect(mine(pod(kind, "Unmasked"))).toEqual([
      `container "task" mounts /proc Unmasked: the kernel's masked paths become visible [${at}.containers[0]]`,
    ]);
    expect(mine(pod(kind, "Unmasked", "initContainers"))).toEqual([
      expect.stringMatching(/^init container "init" mounts \/proc Unmasked/),
    ]);
  });

  it.each([
    [
      "an empty MaskedPaths",
      { MaskedPaths: [] },
      /MaskedPaths leaves out \/proc\/acpi, .*\/sys\/firmware \[HostConfig\.MaskedPaths\]/,
    ],
    [
      "an empty ReadonlyPaths",
      { ReadonlyPaths: [] },
      /ReadonlyPaths leaves out \/proc\/bus, \/proc\/fs, \/proc\/irq, \/proc\/sys, \/proc\/sysrq-trigger/,
    ],
    [
      "a MaskedPaths without /proc/kcore",
      { MaskedPaths: DEFAULT_MASKED_PATHS.filter((p) => p !== "/proc/kcore") },
      /MaskedPaths leaves out \/proc\/kcore \[/,
    ],
    [
      "a ReadonlyPaths with only a sibling of /proc/sys",
      { ReadonlyPaths: [...DEFAULT_READONLY_PATHS.filter((p) => p !== "/proc/sys"), "/proc/sysvipc"] },
      /ReadonlyPaths leaves out \/proc\/sys \[/,
    ],
    [
      "systempaths=unconfined",
      { SecurityOpt: ["no-new-privileges", "systempaths=unconfined"] },
      /mounts \/proc Unmasked/,
    ],
    [
      "writable-cgroups",
      { SecurityOpt: ["writable-cgroups=true"] },
      /writable-cgroups makes the cgroup files writable \[HostConfig\.SecurityOpt\]/,
    ],
  ])("scan refuses an Engine API body with %s", async (_, hc, re) => {
    expect((await engine(hc)).messages).toEqual([expect.stringMatching(re)]);
  });

  it("scan refuses Compose's security_opt and a Kubernetes manifest's procMount", async () => {
    expect(
      (await scanned({ "compose.yaml": compose("security_opt: [systempaths=unconfined]") }, "app")).messages,
    ).toEqual([expect.stringMatching(/mounts \/proc Unmasked/)]);
    expect(
      (await scanned({ "compose.yaml": compose("security_opt: [writable-cgroups=true]") }, "app")).rules,
    ).toContain(RULE);
    const c = safeK8sContainer();
    c.securityContext = { ...(c.securityContext as Obj), procMount: "Unmasked" };
    const pod = JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "task" },
      spec: { ...safePodSpec(), containers: [c] },
    });
    expect((await scanned({ "pod.yaml": pod }, "task")).rules).toContain(RULE);
  });

  it("passes procMount Default or empty, writable-cgroups=false and other security options", () => {
    for (const p of ["Default", "", undefined])
      expect(violated(pod("Pod", p)), String(p)).not.toContain(RULE);
    for (const opt of [
      "writable-cgroups=false",
      "writable-cgroups=0",
      "seccomp=unconfined",
      "label=disable",
      "apparmor=unconfined",
    ])
      expect(violated(docker(opt)), opt).not.toContain(RULE);
  });

  it.each([
    ["the defaults", { MaskedPaths: [...DEFAULT_MASKED_PATHS], ReadonlyPaths: [...DEFAULT_READONLY_PATHS] }],
    [
      "the defaults and more",
      {
        MaskedPaths: [...DEFAULT_MASKED_PATHS, "/proc/self/mem"],
        ReadonlyPaths: [...DEFAULT_READONLY_PATHS, "/proc/cmdline"],
      },
    ],
    [
      "the defaults spelled with // and a trailing /",
      {
        MaskedPaths: DEFAULT_MASKED_PATHS.map((p) => `/${p}/`),
        ReadonlyPaths: DEFAULT_READONLY_PATHS.map((p) => `${p}/`),
      },
    ],
    ["folders that hold every default", { MaskedPaths: ["/proc", "/sys"], ReadonlyPaths: ["/proc"] }],
    ["no lists at all (the daemon's defaults)", {}],
  ])("scan passes an Engine API body whose MaskedPaths and ReadonlyPaths keep %s", async (_, hc) => {
    expect((await engine(hc)).rules).not.toContain(RULE);
  });

  it("notes, without refusing, a procMount or security options not known until the update", () => {
    const unknownList = validate(DOCKER, { ...safeContainer(), securityOpts: UNKNOWN_WIRE });
    for (const o of [pod("Pod", UNKNOWN_WIRE), pod("Job", UNKNOWN_WIRE), unknownList, docker(UNKNOWN_WIRE)]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses an explicit systempaths=unconfined beside an option not known yet", () => {
    expect(mine(docker("systempaths=unconfined", UNKNOWN_WIRE))).toEqual([
      expect.stringMatching(/mounts \/proc Unmasked/),
    ]);
  });
});
