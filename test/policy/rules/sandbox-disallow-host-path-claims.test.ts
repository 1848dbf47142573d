/**
 * sandbox-disallow-host-path-claims (stack rule): a PersistentVolume that is a host folder (`hostPath`, `local`) or
 * a `docker.Volume` whose local driver exposes the host (a bind, an overlay of host folders, a kernel filesystem, a
 * block device; a network share fails closed) is refused, and a pod or container that reaches one through a claim
 * (by `volumeName`, the volume's `claimRef`, or dynamic binding in its storage class) or a volume name is judged by
 * the mount rules as mounting that host folder.
 */
import { describe, expect, it } from "vitest";
import { scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, first, safeContainer, safePodSpec } from "../fixtures";
import { noted, type StackFixture, UNKNOWN_WIRE, validateStack, violated } from "../harness";

const RULE = "sandbox-disallow-host-path-claims";
const PV = "kubernetes:core/v1:PersistentVolume";
const PVC = "kubernetes:core/v1:PersistentVolumeClaim";
const VOLUME = "docker:index/volume:Volume";
type Obj = Record<string, unknown>;

const mine = (fixtures: StackFixture[]) =>
  validateStack(fixtures)
    .violations.filter((v) => v.policy === RULE)
    .map((v) => v.message);
const ACCESS = { accessModes: ["ReadWriteOnce"] };
const pv = (name: string, spec: Obj): StackFixture => ({
  type: PV,
  name,
  props: { metadata: { name }, spec: { capacity: { storage: "1Gi" }, ...ACCESS, ...spec } },
});
const pvc = (name: string, spec: Obj = {}): StackFixture => ({
  type: PVC,
  name,
  props: { metadata: { name }, spec: { ...ACCESS, resources: { requests: { storage: "1Gi" } }, ...spec } },
});
/** A hardened pod carrier whose task container also mounts claim `claim` at /data. */
function claimant(claim: string, kind = "Pod", namespace?: string): StackFixture {
  const s = safePodSpec();
  (s.volumes as Obj[]).push({ name: "data", persistentVolumeClaim: { claimName: claim } });
  (first(s).volumeMounts as Obj[]).push({ name: "data", mountPath: "/data" });
  const c = carrier(kind);
  const props = c.build(s);
  if (namespace !== undefined) props.metadata = { ...(props.metadata as Obj), namespace };
  return { type: c.type, name: "task", props };
}
const volume = (driverOpts: unknown, extra: Obj = {}): StackFixture => ({
  type: VOLUME,
  name: "v",
  props: { name: "hostvol", driverOpts, ...extra },
});
const container = (extra: Obj): StackFixture => ({
  type: DOCKER,
  name: "task",
  props: { ...safeContainer(), ...extra },
});
const BIND = (device: string) => ({ type: "none", o: "bind", device });
const withMount = (m: Obj) => ({ mounts: [...(safeContainer().mounts as Obj[]), m] });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job", () => {
    const stack: StackFixture[] = [{ type: DOCKER, name: "c", props: safeContainer() }];
    for (const kind of ["Pod", "Deployment", "Job"]) {
      const c = carrier(kind);
      stack.push({ type: c.type, name: kind, props: c.build(safePodSpec()) });
    }
    expect(violated(validateStack(stack))).not.toContain(RULE);
  });

  const SOCK = "/var/run/docker.sock to whichever pod claims it: it is the runtime socket /run/docker.sock";
  it.each([
    [
      "a hostPath",
      { hostPath: { path: "/srv/data" } },
      "/srv/data to whichever pod claims it [spec.hostPath.path]",
    ],
    ["a local", { local: { path: "/mnt/disk" } }, "/mnt/disk to whichever pod claims it [spec.local.path]"],
    ["the socket's", { hostPath: { path: "/var/run/docker.sock" } }, `${SOCK} [spec.hostPath.path]`],
  ])("refuses a PersistentVolume that is %s folder, claimed or not", (_, spec, text) => {
    expect(mine([pv("v", spec)])).toEqual([`PersistentVolume "v" hands the host folder ${text}`]);
  });

  const T = "spec.template.spec.containers[0].volumeMounts[2]";
  it.each([
    ["volumeName", "Pod", [pvc("c", { volumeName: "v" })], {}, "spec.containers[0].volumeMounts[2]"],
    ["the volume's claimRef", "Job", [], { claimRef: { name: "c", namespace: "default" } }, T],
    [
      "dynamic binding in its class",
      "Deployment",
      [pvc("c", { storageClassName: "local" })],
      { storageClassName: "local" },
      T,
    ],
    [
      "dynamic binding, no class written",
      "Pod",
      [pvc("c")],
      { storageClassName: "local" },
      "spec.containers[0].volumeMounts[2]",
    ],
  ])("judges a pod reaching the host folder through %s", (_, kind, claims, extra, path) => {
    const m = mine([pv("v", { hostPath: { path: "/var/run" }, ...extra }), ...claims, claimant("c", kind)]);
    // The volume itself; the mount, by the socket rule, the sensitive-folder rule (`/run` holds systemd's folder) and
    // the job-mount rule (a writable host folder under no declared job root).
    expect(m).toHaveLength(4);
    expect(m).toContainEqual(
      expect.stringMatching(/^sandbox-require-single-job-mount: .* writable, and no job root is declared/),
    );
    expect(m).toContain(
      `sandbox-disallow-runtime-socket: container "task" mounts host path /var/run at /data: the folder contains the runtime socket /var/run/docker.sock (the claim "c" is bound to PersistentVolume "v", a host folder) [${path}]`,
    );
  });

  it("takes a pod with no namespace to be in the claimRef's (the context's namespace may be it)", () => {
    const v = pv("v", { hostPath: { path: "/etc" }, claimRef: { name: "c", namespace: "other" } });
    // The volume, and the mount by the sensitive-folder and job-mount rules.
    expect(mine([v, claimant("c")])).toHaveLength(3);
  });

  it("names the mount rule that refuses what the claim brings in: a sensitive folder", () => {
    const m = mine([pv("v", { hostPath: { path: "/etc" } }), pvc("c", { volumeName: "v" }), claimant("c")]);
    expect(m[1]).toMatch(
      /^sandbox-disallow-sensitive-host-mounts: container "task" mounts host path \/etc: it is the host folder \/etc \(the claim "c"/,
    );
  });

  it.each([
    [
      "a bind",
      BIND("/srv/x"),
      "binds the host folder /srv/x (local driver, driverOpts o=bind) into whichever container mounts it [driverOpts.device]",
    ],
    ["a bind, the driver named", BIND("/srv/x"), "binds the host folder /srv/x", { driver: "local" }],
    [
      "an overlay of host folders",
      { type: "overlay", device: "overlay", o: "lowerdir=/etc,upperdir=/u,workdir=/w" },
      "binds the host folder /etc",
    ],
    ["a kernel filesystem", { type: "proc", device: "proc" }, "binds the host folder /proc"],
    ["a block device", { type: "ext4", device: "/dev/sda1" }, "binds the host folder /dev/sda1"],
    [
      "a network share (fails closed)",
      { type: "nfs", o: "addr=10.0.0.1", device: ":/srv" },
      'cannot be checked: a "nfs" volume mounts a remote share',
    ],
  ])("refuses a docker.Volume whose local driver exposes %s", (_, opts, text, extra?: Obj) => {
    const m = mine([volume(opts, extra)]);
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(/docker\.Volume "hostvol" /);
    expect(m[0]).toContain(text);
  });

  it.each([
    [
      "mounts[] of type volume",
      withMount({ type: "volume", source: "hostvol", target: "/data" }),
      "mounts[1]",
    ],
    ["volumes[].volumeName", { volumes: [{ volumeName: "hostvol", containerPath: "/data" }] }, "volumes[0]"],
  ])("judges a container that mounts the host volume by %s", (_, extra, path) => {
    expect(mine([volume(BIND("/var/run")), container(extra)])).toContainEqual(
      `sandbox-disallow-runtime-socket: container "task" mounts host path /var/run at /data: the folder contains the runtime socket /var/run/docker.sock (the volume "hostvol" is docker.Volume "hostvol", a host folder) [${path}]`,
    );
  });

  it("fails closed on a container that mounts a docker.Volume of a plugin driver, which mounts what its options say", () => {
    const m = mine([
      volume(BIND("/etc"), { driver: "rexray/ebs" }),
      container(withMount({ type: "volume", source: "hostvol", target: "/data" })),
    ]);
    expect(m).toContainEqual(expect.stringMatching(/the volume driver "rexray\/ebs" is a plugin/));
  });

  it("judges a container whose volume name is not known yet by the volume it was computed from", () => {
    const c: StackFixture = {
      ...container({ volumes: [{ volumeName: UNKNOWN_WIRE, containerPath: "/data" }] }),
      dependsOn: { volumes: ["v"] },
    };
    const m = mine([volume(BIND("/etc"), { name: undefined }), c]);
    expect(m).toContainEqual(
      expect.stringMatching(
        /^sandbox-disallow-sensitive-host-mounts: .*\(the volume "\(not known yet\)" is docker\.Volume "v", a host folder\)/,
      ),
    );
  });

  describe("false-deny controls", () => {
    const claimed = (spec: Obj) => [pv("v", spec), pvc("c", { volumeName: "v" }), claimant("c")];
    const mounted = (opts: unknown) => [
      volume(opts),
      container(withMount({ type: "volume", source: "hostvol", target: "/data" })),
    ];
    it.each([
      ["an nfs PersistentVolume", claimed({ nfs: { server: "nfs.example", path: "/srv" } })],
      ["a CSI PersistentVolume", claimed({ csi: { driver: "ebs.csi.aws.com", volumeHandle: "vol-1" } })],
      ["a memory docker.Volume", mounted({ type: "tmpfs", device: "tmpfs", o: "size=64m" })],
      ["a plain docker.Volume", mounted(undefined)],
    ])("passes %s", (_, stack) => {
      expect(mine(stack)).toEqual([]);
    });

    it.each([
      [
        "a claim of another storage class",
        [pvc("c", { storageClassName: "fast" })],
        { storageClassName: "local" },
      ],
      [
        "a claim in a namespace the claimRef does not name",
        [],
        { claimRef: { name: "c", namespace: "other" } },
      ],
      [
        "a claim the volume is reserved away from",
        [pvc("c", { storageClassName: "local" })],
        { storageClassName: "local", claimRef: { name: "db" } },
      ],
    ])("refuses only the volume itself, not a pod with %s", (_, claims, extra) => {
      const m = mine([
        pv("v", { hostPath: { path: "/etc" }, ...extra }),
        ...claims,
        claimant("c", "Pod", "sbx"),
      ]);
      expect(m).toEqual([expect.stringMatching(/^PersistentVolume "v" hands the host folder \/etc/)]);
    });

    it("refuses only the volume, not a container that mounts another one", () => {
      const c = container(withMount({ type: "volume", source: "scratch", target: "/data" }));
      expect(mine([volume(BIND("/etc")), c])).toEqual([
        expect.stringMatching(/^docker\.Volume "hostvol" binds the host folder \/etc/),
      ]);
    });
  });

  it("notes a host path or driver options not known until the update", () => {
    for (const stack of [
      [pv("v", { hostPath: { path: UNKNOWN_WIRE } })],
      [pv("v", { hostPath: UNKNOWN_WIRE })],
      [volume(UNKNOWN_WIRE)],
    ]) {
      const o = validateStack(stack);
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  describe("scan judges every document together, as the pack judges a stack", () => {
    const doc = (f: StackFixture, kind: string) =>
      JSON.stringify({ apiVersion: "v1", kind, ...(f.props as Obj) });
    async function found(docs: Record<string, string>, args: string[]) {
      const { code, report } = await scanJson(args, undefined, tempFiles(docs));
      expect(report.errors).toEqual([]);
      const of = report.findings.filter((f) => f.ruleId === RULE);
      return { code, found: [...new Set(of.map((f) => `${f.resource.kind}/${f.resource.name}`))] };
    }

    it("in one file and across the files of a folder", async () => {
      const v = doc(pv("v", { hostPath: { path: "/var/run" } }), "PersistentVolume");
      const c = doc(pvc("c", { volumeName: "v" }), "PersistentVolumeClaim");
      const pod = doc(claimant("c"), "Pod");
      const one = await found({ "all.yaml": [v, c, pod].join("\n---\n") }, ["all.yaml"]);
      expect(one).toEqual({ code: 1, found: ["PersistentVolume/v", "Pod/task"] });
      const split = await found({ "pv.yaml": v, "app.yaml": `${c}\n---\n${pod}` }, ["."]);
      expect(split.found).toEqual(["PersistentVolume/v", "Pod/task"]);
    });

    it("refuses an Engine volume create body that binds a host folder, and passes one that does not", async () => {
      const body = (DriverOpts: Obj) => JSON.stringify({ Name: "hostvol", Driver: "local", DriverOpts });
      expect(await found({ "v.json": body(BIND("/etc")) }, ["v.json"])).toEqual({
        code: 1,
        found: ["Volume/hostvol"],
      });
      const tmpfs = body({ type: "tmpfs", device: "tmpfs", o: "size=64m" });
      expect((await found({ "v.json": tmpfs }, ["v.json"])).found).toEqual([]);
    });
  });
});
