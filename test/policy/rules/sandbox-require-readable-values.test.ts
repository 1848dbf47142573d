/**
 * sandbox-require-readable-values: a workload whose settings cannot be read is refused. A Pulumi secret outside the
 * task's environment (the pack learns of it in the remediation pass and seals it), a value nested deeper than any
 * schema, a pod spec of the wrong shape, an Engine body the daemon refuses or reads differently by version
 * (HostConfig fields at the top level), a YAML alias where a JSON value belongs.
 */
import { describe, expect, it } from "vitest";
import { scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { engineRun, noted, type Outcome, secret, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-readable-values";
type Spec = Record<string, unknown>;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: object) => validate(DOCKER, { ...safeContainer(), ...props });
const kube = (kind: string, spec: unknown) => {
  const c = carrier(kind);
  return validate(c.type, c.build(spec as Spec));
};
/** A pod whose first container's settings are edited. */
function podWith(edit: (c: Record<string, unknown>) => void): Record<string, unknown> {
  const s = safePodSpec();
  edit((s.containers as Record<string, unknown>[])[0] as Record<string, unknown>);
  return carrier("Pod").build(s);
}

const HC = {
  CapDrop: ["ALL"],
  SecurityOpt: ["no-new-privileges"],
  ReadonlyRootfs: true,
  NetworkMode: "none",
  Memory: 536870912,
  NanoCpus: 1e9,
  PidsLimit: 64,
};
const body = (extra: object = {}, hostConfig: object | null = HC) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    ...(hostConfig === null ? {} : { HostConfig: hostConfig }),
    ...extra,
  });
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const stackExport = (inputs: object) =>
  JSON.stringify({
    version: 3,
    deployment: {
      resources: [
        {
          urn: "urn:pulumi:dev::sandbox::docker:index/container:Container::task",
          custom: true,
          type: "docker:index/container:Container",
          inputs: { ...safeContainer(), ...inputs },
        },
      ],
    },
  });

async function scanned(file: string, text: string, name: string): Promise<string[]> {
  const dir = tempFiles({ [file]: text });
  const { report } = await scanJson([file], undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return violationsOf(report, name)
    .filter((m) => m.startsWith(`${RULE}: `))
    .map((m) => m.slice(RULE.length + 2));
}

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of ["Pod", "Deployment", "Job"])
      expect(violated(kube(kind, safePodSpec())), kind).not.toContain(RULE);
  });

  describe("a Pulumi secret where a wall is set (seen by the remediation pass, sealed for validation)", () => {
    it.each([
      [
        "user",
        { user: secret("1000:1000") },
        "user cannot be read: it is a Pulumi secret, whose value the policy cannot see [user]",
      ],
      [
        "a mount's source",
        { mounts: [{ type: "bind", source: secret("/srv/job"), target: "/job" }] },
        "mounts[0].source cannot be read: it is a Pulumi secret",
      ],
      [
        "the network mode",
        { networkMode: secret("none") },
        "networkMode cannot be read: it is a Pulumi secret",
      ],
    ])("refuses a docker.Container whose %s is a secret", (_, props, text) => {
      const m = mine(engineRun(DOCKER, { ...safeContainer(), ...props }).outcome);
      expect(m).toHaveLength(1);
      expect(m[0]).toContain(text);
    });

    it("refuses a Pod whose runAsUser is a secret", () => {
      const props = podWith((c) => {
        (c.securityContext as Record<string, unknown>).runAsUser = secret(1000);
      });
      expect(mine(engineRun(carrier("Pod").type, props).outcome)).toEqual([
        "spec.containers[0].securityContext.runAsUser cannot be read: it is a Pulumi secret, whose value the policy cannot see [spec.containers[0].securityContext.runAsUser]",
      ]);
    });

    it("leaves a secret in the task's environment to sandbox-disallow-secret-env", () => {
      const d = engineRun(DOCKER, {
        ...safeContainer(),
        envs: ["LANG=C.UTF-8", secret("TOKEN=abcdefgh12345678")],
      });
      expect(violated(d.outcome)).not.toContain(RULE);
      expect(violated(d.outcome)).toContain("sandbox-disallow-secret-env");
      const k = engineRun(
        carrier("Pod").type,
        podWith((c) => {
          (c.env as Record<string, unknown>[]).push({ name: "TOKEN", value: secret("abcdefgh12345678") });
        }),
      );
      expect(violated(k.outcome)).not.toContain(RULE);
      expect(violated(k.outcome)).toContain("sandbox-disallow-secret-env");
    });
  });

  it("refuses props nested deeper than any resource schema", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 600; i++) deep = { a: deep };
    const m = mine(docker({ labels: [{ label: "deep", value: deep }] }));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(
      /^labels\[0\]\.value(?:\.a)+ cannot be read: it is nested more than 512 levels deep/,
    );
  });

  it.each([
    ["Pod", "spec.containers"],
    ["Deployment", "spec.template.spec.containers"],
    ["Job", "spec.template.spec.containers"],
  ])("refuses a %s whose pod spec is a text", (kind, path) => {
    const m = mine(kube(kind, "containers: []"));
    expect(m).toContain(
      `${path} cannot be read: the text "containers: []" stands where an object belongs [${path}]`,
    );
  });

  describe("scan", () => {
    it("refuses an Engine body whose HostConfig fields sit at the top level, and passes the same body under HostConfig", async () => {
      const m = await scanned("body.json", body(HC, null), "container#1");
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(
        /^\(HostConfig fields at the top level\) cannot be read: HostConfig fields at the top level of the body \(.*NetworkMode.*\) apply on Docker up to v26/,
      );
      expect(await scanned("body.json", body(), "container#1")).toEqual([]);
    });

    it("passes top-level fields the daemon ignores because HostConfig is there", async () => {
      // With a HostConfig, v20.10 to v26 copy only Memory, MemorySwap, CpuShares, CpusetCpus and VolumeDriver, and
      // only where HostConfig leaves them zero; v27 ignores the top level: the container is the same on both.
      expect(await scanned("body.json", body({ Privileged: true, Memory: 1 }), "container#1")).toEqual([]);
    });

    it("refuses an Engine body the daemon cannot decode", async () => {
      const m = await scanned("body.json", body({}, { ...HC, Privileged: "yes" }), "container#1");
      expect(m).toContain(
        "HostConfig.Privileged cannot be read: the Engine refuses the body: a string stands where true or false belongs [HostConfig.Privileged]",
      );
    });

    it("refuses a YAML alias where a JSON value belongs", async () => {
      const yaml = `Image: sandbox-busybox:1\nUser: &u "1000:1000"\nLabels: {a: *u}\nHostConfig: ${JSON.stringify(HC)}\n`;
      expect(await scanned("body.yaml", yaml, "container#1")).toEqual([
        "Labels.a cannot be read: a YAML alias stands where a value belongs [Labels.a]",
      ]);
    });

    it("refuses a Pod manifest whose spec is a text", async () => {
      const pod = JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec: "x" });
      expect(await scanned("pod.yaml", pod, "task")).toContain(
        'spec.containers cannot be read: the text "x" stands where an object belongs [spec.containers]',
      );
    });

    it("refuses a state whose container user is a secret, and passes one whose environment holds it", async () => {
      const sealed = { [SECRET_SIG]: "1b47061264138c4ac30d75fd1eb44270", ciphertext: "AAAA" };
      expect(await scanned("state.json", stackExport({ user: sealed }), "task")).toEqual([
        "user cannot be read: it is a Pulumi secret, whose value the policy cannot see [user]",
      ]);
      expect(await scanned("state.json", stackExport({ envs: ["LANG=C.UTF-8", sealed] }), "task")).toEqual(
        [],
      );
    });

    it.each([
      [
        "a Compose label",
        "compose.yaml",
        "services:\n  app:\n    image: sandbox-busybox:1\n    labels:\n      a: !!binary aGVsbG8=\n",
        "app",
      ],
      [
        "a Pod label",
        "pod.yaml",
        `apiVersion: v1\nkind: Pod\nmetadata:\n  name: task\n  labels:\n    a: !!binary aGVsbG8=\nspec: ${JSON.stringify(safePodSpec())}\n`,
        "task",
      ],
    ])("passes !!binary in %s: the engine's YAML reader decodes it to text", async (_, file, text, name) => {
      expect(await scanned(file, text, name)).toEqual([]);
    });
  });

  it("ignores what controllers write (status)", () => {
    const c = carrier("Pod");
    expect(violated(validate(c.type, { ...c.build(safePodSpec()), status: "Running" }))).not.toContain(RULE);
  });

  it("notes a pod spec not known until the update, and passes an unknown value (other rules note it)", () => {
    const o = validate(carrier("Pod").type, { metadata: { name: "t" }, spec: UNKNOWN_WIRE });
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
    expect(violated(docker({ user: UNKNOWN_WIRE }))).not.toContain(RULE);
  });
});
