/**
 * sandbox-disallow-devices: no host device reaches a task. Docker `devices`, `gpus`, `deviceRequests` and device
 * cgroup rules; a bind of a path under /dev; Kubernetes raw block `volumeDevices`, hostPaths of type CharDevice or
 * BlockDevice or under /dev, extended resources (served by a device plugin) and DRA claims. `allowGpu` lets GPU
 * requests through, never a device cgroup rule; `allowedResources` names extended resources; `allowResourceClaims`.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, type RunOptions, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-devices";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object): RunOptions => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (props: Obj, config?: object) =>
  validate(DOCKER, { ...safeContainer(), ...props }, opts(config));
const bind = (source: string, extra: Obj = {}) =>
  docker({ mounts: [{ type: "bind", source, target: "/mnt/d", readOnly: true, ...extra }] });

/** A hardened pod, its spec and first container edited. */
function pod(kind: string, edit: (spec: Obj, c: Obj) => void, config?: object): Outcome {
  const spec = safePodSpec();
  edit(spec, (spec.containers as Obj[])[0] as Obj);
  return validate(carrier(kind).type, carrier(kind).build(spec), opts(config));
}
const limit =
  (name: string, value: unknown = 1) =>
  (_: Obj, c: Obj) => {
    const r = c.resources as Obj;
    c.resources = { ...r, limits: { ...(r.limits as Obj), [name]: value } };
  };
const hostVolume = (path: unknown, type?: string) => (spec: Obj, c: Obj) => {
  spec.volumes = [...(spec.volumes as Obj[]), { name: "dev", hostPath: { path, ...(type ? { type } : {}) } }];
  c.volumeMounts = [...(c.volumeMounts as Obj[]), { name: "dev", mountPath: "/mnt/d" }];
};
const claim = (spec: Obj) => {
  spec.resourceClaims = [{ name: "gpu", resourceClaimTemplateName: "one-gpu" }];
};

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
    HostConfig: { ReadonlyRootfs: true, ...hc },
  });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of KINDS) expect(violated(pod(kind, () => {})), kind).not.toContain(RULE);
  });

  it.each([
    [
      "devices",
      { devices: [{ hostPath: "/dev/fuse", containerPath: "/dev/fuse" }] },
      'container "fixture" gets the host device /dev/fuse',
    ],
    ["gpus", { gpus: "all" }, "the workload requests host devices (gpus=all)"],
    [
      "deviceRequests",
      { deviceRequests: [{ driver: "nvidia", count: -1 }] },
      "the workload requests host devices (deviceRequests[0] (driver nvidia))",
    ],
    [
      "deviceCgroupRules",
      { deviceCgroupRules: ["a *:* rwm"] },
      "the workload opens host devices in its device cgroup (deviceCgroupRules[0] (a *:* rwm)), whatever allowGpu says",
    ],
  ])("refuses docker.Container %s", (_, props, message) => {
    expect(mine(docker(props))).toEqual([message]);
  });

  it.each(["/dev/kvm", "/dev/dri", "//dev/./net/tun", "/var/../dev/sda1"])(
    "refuses a docker.Container bind of the device path %s",
    (source) => {
      expect(mine(bind(source))).toEqual([
        expect.stringMatching(/^container "fixture" mounts the host device path \/dev\/\S+ \[mounts\[0\]\]$/),
      ]);
    },
  );

  it("refuses a local volume whose options bind a device path", () => {
    const v = {
      type: "volume",
      source: "d",
      target: "/d",
      volumeOptions: { driverOptions: { type: "none", o: "bind", device: "/dev/kvm" } },
    };
    expect(mine(docker({ mounts: [v] }))).toEqual([
      expect.stringMatching(/mounts the host device path \/dev\/kvm/),
    ]);
  });

  it.each(KINDS)(
    "refuses a %s that requests a GPU, an extended resource, a DRA claim or a raw block device",
    (kind) => {
      expect(mine(pod(kind, limit("nvidia.com/gpu")))).toEqual([
        expect.stringMatching(/container "task" requests the device resource nvidia\.com\/gpu/),
      ]);
      expect(mine(pod(kind, limit("example.com/dongle")))).toEqual([
        expect.stringMatching(/requests the extended resource example\.com\/dongle: a device plugin/),
      ]);
      expect(mine(pod(kind, claim))).toEqual([
        expect.stringMatching(
          /Dynamic Resource Allocation \(resource claim gpu from ResourceClaimTemplate one-gpu/,
        ),
      ]);
      const block = pod(kind, (spec, c) => {
        spec.volumes = [
          ...(spec.volumes as Obj[]),
          { name: "blk", persistentVolumeClaim: { claimName: "raw" } },
        ];
        c.volumeDevices = [{ name: "blk", devicePath: "/dev/xvda" }];
      });
      expect(mine(block)).toEqual([
        expect.stringMatching(/container "task" gets the host device \/dev\/xvda/),
      ]);
    },
  );

  it("counts an extended resource written only as a request, in an init container too", () => {
    const o = pod("Pod", (spec) => {
      spec.initContainers = [{ name: "init", image: "x", resources: { requests: { "amd.com/gpu": 1 } } }];
    });
    expect(mine(o)).toEqual([
      expect.stringMatching(/^init container "init" requests the device resource amd\.com\/gpu/),
    ]);
  });

  it.each([
    ["CharDevice", "/srv/not-under-dev", /mounts the host device \/srv\/not-under-dev/],
    ["BlockDevice", "/srv/disk", /mounts the host device \/srv\/disk/],
    [undefined, "/dev/kvm", /mounts the host device path \/dev\/kvm/],
  ])("refuses a hostPath of type %s at %s", (type, path, re) => {
    expect(mine(pod("Pod", hostVolume(path, type)))).toEqual([expect.stringMatching(re)]);
  });

  it.each([
    ["devices", { "compose.yaml": compose("devices: [/dev/fuse]") }, /gets the host device \/dev\/fuse/],
    [
      "a CDI device",
      { "compose.yaml": compose("devices: [nvidia.com/gpu=all]") },
      /gets the host device nvidia\.com\/gpu=all/,
    ],
    ["gpus", { "compose.yaml": compose("gpus: all") }, /requests host devices \(gpus=all\)/],
    [
      "device reservations",
      {
        "compose.yaml": compose(
          "deploy: { resources: { reservations: { devices: [{ driver: nvidia, capabilities: [gpu] }] } } }",
        ),
      },
      /deviceRequests\[0\] \(driver nvidia\)/,
    ],
    [
      "device_cgroup_rules",
      { "compose.yaml": compose("device_cgroup_rules: ['c 10:200 rwm']") },
      /device cgroup \(deviceCgroupRules\[0\] \(c 10:200 rwm\)\)/,
    ],
  ])("scan refuses a Compose service with %s", async (_, files, re) => {
    expect((await scanned(files, "app")).messages).toContainEqual(expect.stringMatching(re));
  });

  it("scan refuses an Engine API body's Devices, DeviceRequests and DeviceCgroupRules, each named", async () => {
    const { messages } = await scanned(
      {
        "body.json": body({
          Devices: [{ PathOnHost: "/dev/fuse", PathInContainer: "/dev/fuse", CgroupPermissions: "rwm" }],
          DeviceRequests: [{ Driver: "nvidia", Count: -1 }],
          DeviceCgroupRules: ["a *:* rwm"],
        }),
      },
      "container#1",
    );
    expect(messages).toHaveLength(3);
    for (const re of [
      /gets the host device \/dev\/fuse/,
      /requests host devices \(HostConfig\.DeviceRequests\[0\]\)/,
      /device cgroup \(HostConfig\.DeviceCgroupRules\[0\]: a \*:\* rwm\)/,
    ])
      expect(messages).toContainEqual(expect.stringMatching(re));
  });

  it("scan refuses a Kubernetes manifest that requests a GPU", async () => {
    const spec = safePodSpec();
    limit("nvidia.com/gpu")(spec, (spec.containers as Obj[])[0] as Obj);
    const { rules } = await scanned(
      { "pod.yaml": JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec }) },
      "task",
    );
    expect(rules).toContain(RULE);
  });

  it("with allowGpu, lets GPU requests through, never devices, device cgroup rules or other extended resources", () => {
    const gpu = { allowGpu: true };
    for (const props of [{ gpus: "all" }, { deviceRequests: [{ driver: "nvidia" }] }])
      expect(violated(docker(props, gpu))).not.toContain(RULE);
    expect(violated(pod("Pod", limit("nvidia.com/gpu"), gpu))).not.toContain(RULE);
    expect(violated(docker({ deviceCgroupRules: ["a *:* rwm"] }, gpu))).toContain(RULE);
    expect(violated(docker({ devices: [{ hostPath: "/dev/nvidia0" }] }, gpu))).toContain(RULE);
    expect(violated(pod("Pod", limit("example.com/dongle"), gpu))).toContain(RULE);
  });

  it("with allowedResources, lets the named extended resources through, exactly", () => {
    const cfg = { allowedResources: ["example.com/dongle"] };
    expect(violated(pod("Pod", limit("example.com/dongle"), cfg))).not.toContain(RULE);
    expect(violated(pod("Pod", limit("example.com/other"), cfg))).toContain(RULE);
    expect(violated(pod("Pod", limit("nvidia.com/gpu"), cfg))).toContain(RULE);
  });

  it("with allowResourceClaims, lets DRA claims through", () => {
    expect(violated(pod("Pod", claim, { allowResourceClaims: true }))).not.toContain(RULE);
    expect(violated(pod("Pod", claim, { allowGpu: true }))).toContain(RULE);
  });

  it.each(["/dev", "/devices/x", "/dev-data", "/srv/dev/kvm", "/var/lib/sandbox-projects/demo/jobs/1"])(
    "passes a bind of %s, which is no device",
    (source) => {
      expect(violated(bind(source))).not.toContain(RULE);
    },
  );

  it("passes empty device lists, an empty gpus, the plain resources, and hostPaths of other types", () => {
    expect(
      violated(docker({ devices: [], deviceRequests: [], deviceCgroupRules: [], gpus: "" })),
    ).not.toContain(RULE);
    for (const r of ["cpu", "memory", "ephemeral-storage", "hugepages-2Mi"])
      expect(violated(pod("Pod", limit(r, "1Gi"))), r).not.toContain(RULE);
    for (const t of ["Directory", "DirectoryOrCreate", "File"])
      expect(violated(pod("Pod", hostVolume("/srv/data", t))), t).not.toContain(RULE);
  });

  it("notes, without refusing, a device path not known until the update", () => {
    const o = docker({ devices: [{ hostPath: UNKNOWN_WIRE, containerPath: "/dev/x" }] });
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });

  it("notes, without refusing, a gpus value not known until the update, and refuses a known one", () => {
    const o = docker({ gpus: UNKNOWN_WIRE });
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
    expect(violated(docker({ gpus: "all" }))).toContain(RULE);
  });
});
