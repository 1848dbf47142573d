/**
 * sandbox-disallow-runtime-socket (mission): no host mount (a bind, a hostPath, a `local` volume whose options bind a
 * host path) reaches a container runtime's API socket, a folder that holds one or a runtime's socket folder, in any
 * spelling the daemon or the kubelet resolves to it. Volumes, tmpfs and emptyDirs are not host paths.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-runtime-socket";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
const JOB = "/var/lib/sandbox-projects/demo/jobs/1";

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: Obj) => validate(DOCKER, { ...safeContainer(), ...props });
const bind = (source: string, extra: Obj = {}) =>
  docker({ mounts: [{ type: "bind", source, target: "/mnt/x", readOnly: true, ...extra }] });

/** A hardened pod whose first container also mounts `volume` at /mnt/x (with `mount` merged into the mount). */
function pod(kind: string, volume: Obj, mount: Obj | false = {}, spec: Obj = safePodSpec()): Outcome {
  const s: Obj = { ...spec, volumes: [...(spec.volumes as Obj[]), { name: "host", ...volume }] };
  if (mount !== false) {
    const [c, ...rest] = s.containers as Obj[];
    const mounts = [...((c?.volumeMounts as Obj[]) ?? []), { name: "host", mountPath: "/mnt/x", ...mount }];
    s.containers = [{ ...c, volumeMounts: mounts }, ...rest];
  }
  return validate(carrier(kind).type, carrier(kind).build(s));
}
const hostPath = (path: unknown, type?: string) => ({ hostPath: { path, ...(type ? { type } : {}) } });

async function scanned(files: Record<string, string>, name: string) {
  const dir = tempFiles(files);
  const { report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return { rules: rulesOf(report, name), messages: violationsOf(report, name) };
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
const manifest = (volume: Obj) => {
  const spec = safePodSpec();
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "task" },
    spec: { ...spec, volumes: [...(spec.volumes as Obj[]), { name: "host", ...volume }] },
  });
};

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods, with and without a hostPath job folder", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of KINDS) {
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
      expect(violated(pod(kind, hostPath(JOB, "Directory"), {})), kind).not.toContain(RULE);
    }
  });

  it.each([
    ["/var/run/docker.sock", /it is the runtime socket \/run\/docker\.sock/],
    ["//var/run/./docker.sock/", /it is the runtime socket \/run\/docker\.sock/],
    ["/var/lib/../run/docker.sock", /it is the runtime socket \/run\/docker\.sock/],
    ["/run/containerd/containerd.sock", /it is the runtime socket \/run\/containerd\/containerd\.sock/],
    ["/var/run/crio/crio.sock", /it is the runtime socket \/run\/crio\/crio\.sock/],
    ["/run/systemd/private", /it is the runtime socket \/run\/systemd\/private/],
    ["/run", /the folder contains the runtime socket/],
    ["/var", /the folder contains the runtime socket/],
    ["/", /the folder contains the runtime socket/],
    ["/run/containerd/io.containerd.runtime.v2.task", /inside the runtime folder \/run\/containerd/],
    ["/srv/ci/docker.sock", /it is a container runtime socket \(docker\.sock\)/],
    ["/run/user/1000", /per-user runtime sockets/],
    ["/run/user/1000/bus", /D-Bus session bus or systemd manager/],
    ["/home/dev/.colima/default", /per-user runtime folder/],
    ["/home/dev", /per-user runtime folders/],
  ])("refuses a docker.Container bind of %s, read-only or not, naming the path", (source, re) => {
    for (const readOnly of [true, false]) {
      const m = mine(bind(source, { readOnly }));
      expect(m).toHaveLength(1);
      expect(m[0]).toContain(`mounts host path ${source} at /mnt/x`);
      expect(m[0]).toMatch(re);
    }
  });

  it.each([
    [
      "a named pipe",
      {
        mounts: [
          { type: "npipe", source: "\\\\.\\pipe\\docker_engine", target: "\\\\.\\pipe\\docker_engine" },
        ],
      },
      /runtime named pipe/,
    ],
    [
      "volumes[].hostPath",
      { volumes: [{ hostPath: "/var/run/docker.sock", containerPath: "/s" }] },
      /\[volumes\[0\]\]$/,
    ],
    [
      "a volumeName that is a path",
      { volumes: [{ volumeName: "/run/docker.sock", containerPath: "/s" }] },
      /\[volumes\[0\]\]$/,
    ],
    [
      "a local volume whose options bind /var/run",
      {
        mounts: [
          {
            type: "volume",
            source: "v",
            target: "/s",
            volumeOptions: {
              driverName: "local",
              driverOptions: { type: "none", o: "bind", device: "/var/run" },
            },
          },
        ],
      },
      /host path \/var\/run .*\[mounts\[0\]\.volumeOptions\.driverOptions\.device\]$/,
    ],
    [
      "a mount whose type is not known yet",
      { mounts: [{ type: UNKNOWN_WIRE, source: "/var/run/docker.sock", target: "/s" }] },
      /runtime socket/,
    ],
  ])("refuses %s on docker.Container", (_, props, re) => {
    const m = mine(docker(props));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it("fails closed on volumes_from, whose mounts it cannot see", () => {
    expect(mine(docker({ volumes: [{ fromContainer: "builder" }] }))[0]).toMatch(
      /cannot be checked: .*builder.*fails closed/,
    );
  });

  it.each(KINDS)(
    "refuses a %s whose container mounts the socket by hostPath, or by a subPath of /var",
    (kind) => {
      expect(mine(pod(kind, hostPath("/var/run/docker.sock", "Socket")))[0]).toMatch(
        /container "task" mounts host path \/var\/run\/docker\.sock at \/mnt\/x: it is the runtime socket/,
      );
      expect(mine(pod(kind, hostPath("/var"), { subPath: "run/docker.sock" }))[0]).toContain(
        "host path /var/run/docker.sock",
      );
    },
  );

  it.each(KINDS)(
    "refuses a %s with a socket hostPath that no container mounts (the node still sets it up)",
    (kind) => {
      const m = mine(pod(kind, hostPath("/run/containerd"), false));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(
        /pod volume "host" \(not mounted by any container yet\) mounts host path \/run\/containerd/,
      );
    },
  );

  it("refuses an init container that mounts the socket", () => {
    const spec = {
      ...safePodSpec(),
      initContainers: [{ name: "setup", image: "x", volumeMounts: [{ name: "host", mountPath: "/s" }] }],
    };
    const o = pod("Pod", hostPath("/var/run/docker.sock"), false, spec);
    expect(mine(o)).toEqual([
      expect.stringMatching(/^init container "setup" mounts host path \/var\/run\/docker\.sock/),
    ]);
  });

  it.each([
    [
      "compose: a short-syntax bind",
      { "compose.yaml": compose("volumes: ['/var/run/docker.sock:/var/run/docker.sock']") },
      "app",
    ],
    ["compose: use_api_socket", { "compose.yaml": compose("use_api_socket: true") }, "app"],
    ["an Engine API body: Binds of /run", { "body.json": body({ Binds: ["/run:/run:ro"] }) }, "container#1"],
    [
      "an Engine API body: a Mounts bind",
      { "body.json": body({ Mounts: [{ Type: "bind", Source: "/run/podman/podman.sock", Target: "/s" }] }) },
      "container#1",
    ],
    [
      "a Kubernetes manifest: an unmounted hostPath",
      { "pod.yaml": manifest(hostPath("/var/run/docker.sock")) },
      "task",
    ],
  ])("scan refuses %s", async (_, files, name) => {
    expect((await scanned(files, name)).rules).toContain(RULE);
  });

  it("scan passes the same inputs with the job folder instead", async () => {
    expect(
      (await scanned({ "compose.yaml": compose(`volumes: ['${JOB}:/job']`) }, "app")).rules,
    ).not.toContain(RULE);
    expect(
      (await scanned({ "body.json": body({ Binds: [`${JOB}:/job`] }) }, "container#1")).rules,
    ).not.toContain(RULE);
    expect((await scanned({ "pod.yaml": manifest(hostPath(JOB)) }, "task")).rules).not.toContain(RULE);
  });

  it.each([
    JOB,
    "/srv/docker-builds",
    "/var/run-data",
    "/srv/runbooks",
    "/tmp/sandbox-jobs/1",
    "/tmp/ssh.txt",
    "/home/dev/project",
    "/srv/ci/docker.socket.md",
    "D:\\sandbox\\job",
  ])("passes a bind of %s, which holds no runtime socket", (source) => {
    expect(violated(bind(source))).not.toContain(RULE);
  });

  describe("control sockets outside the runtimes' own (connect() ignores a read-only mount)", () => {
    it.each([
      ["/run/tailscale/tailscaled.sock", /inside \/run \(the host's runtime folder/],
      ["/var/run/cilium", /inside \/run /],
      ["/run/cilium/cilium.sock", /inside \/run /],
      ["/var/run/openvswitch", /inside \/run /],
      ["/var/run/calico", /inside \/run /],
      ["/run/netns", /inside \/run /],
      ["/run/snapd.socket", /inside \/run /],
      ["/run/sandbox-projects/demo", /inside \/run /],
      ["/run/user/1000/app", /inside \/run /],
      ["/var/lock/subsys", /inside \/var\/lock \(a link to \/run\/lock/],
      ["/var/lib/kubelet/plugins/csi.example.com", /the kubelet's CSI and DRA driver socket folder/],
      ["/var/lib/kubelet/plugins_registry", /plugin registration socket folder/],
      ["/tmp/.X11-unix/X0", /inside \/tmp\/\.X11-unix/],
      ["/tmp/tmux-1000/default", /inside \/tmp\/tmux-\*/],
      ["/tmp", /the folder contains \/tmp\/\.X11-unix/],
      ["/srv/app/agent.sock", /named as a unix socket \(agent\.sock\)/],
    ])("refuses %s, read-only or not, in a docker.Container bind and a hostPath", (source, re) => {
      for (const readOnly of [true, false]) {
        const m = mine(bind(source, { readOnly }));
        expect(m).toHaveLength(1);
        expect(m[0]).toMatch(re);
        expect(m[0]).toContain("a read-only mount does not stop connecting");
        const k = mine(pod("Pod", hostPath(source), { readOnly }));
        expect(k).toHaveLength(1);
        expect(k[0]).toMatch(re);
      }
    });

    it("refuses a hostPath of type Socket wherever it is, and passes the job folder's Directory", () => {
      const m = mine(pod("Job", hostPath("/srv/app/control", "Socket"), { readOnly: true }));
      expect(m).toEqual([
        expect.stringMatching(
          /mounts host path \/srv\/app\/control at \/mnt\/x: its hostPath type is Socket: a unix socket of the host/,
        ),
      ]);
      expect(mine(pod("Job", hostPath(JOB, "DirectoryOrCreate"), {}))).toEqual([]);
      expect(mine(pod("Job", hostPath("/srv/reference", "Directory"), { readOnly: true }))).toEqual([]);
    });
  });

  it("passes what is not a host path: a tmpfs or a named volume at /var/run, the socket's path as a target", () => {
    expect(violated(docker({ tmpfs: { "/var/run": "rw,size=1m" } }))).not.toContain(RULE);
    expect(
      violated(
        docker({ mounts: [{ type: "volume", source: "docker.sock", target: "/var/run/docker.sock" }] }),
      ),
    ).not.toContain(RULE);
    expect(
      violated(docker({ mounts: [{ type: "bind", source: JOB, target: "/var/run/docker.sock" }] })),
    ).not.toContain(RULE);
    expect(violated(pod("Pod", { emptyDir: {} }, { mountPath: "/var/run" }))).not.toContain(RULE);
  });

  it("notes, without refusing, a host path or a mount list not known until the update", () => {
    for (const o of [
      bind(UNKNOWN_WIRE),
      docker({ mounts: UNKNOWN_WIRE }),
      pod("Pod", hostPath(UNKNOWN_WIRE)),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });
});
