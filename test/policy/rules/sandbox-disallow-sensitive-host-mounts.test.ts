/**
 * sandbox-disallow-sensitive-host-mounts: no host mount shows the host's system folders (/, /etc, /proc, /sys, /usr,
 * /dev, runtime state, logs), a folder under one, a folder that holds one, or a credential of the host's user
 * (~/.ssh, agent and display sockets, home folders), whether it is written read-only or not. A `local` volume whose
 * options mount a kernel filesystem or an overlay of host folders exposes those folders. Windows drives and pipes
 * are judged as the Windows daemon reads them.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-sensitive-host-mounts";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
const JOB = "/var/lib/sandbox-projects/demo/jobs/1";

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: Obj) => validate(DOCKER, { ...safeContainer(), ...props });
const bind = (source: string, readOnly = true) =>
  docker({ mounts: [{ type: "bind", source, target: "/mnt/x", readOnly }] });
const localVolume = (driverOptions: Obj) => ({
  mounts: [
    { type: "volume", source: "v", target: "/mnt/x", volumeOptions: { driverName: "local", driverOptions } },
  ],
});

/** A hardened pod with one more volume, mounted by its container at /mnt/x unless `mounted` is false. */
function pod(kind: string, volume: Obj, mounted = true, mount: Obj = {}): Outcome {
  const spec = safePodSpec();
  spec.volumes = [...(spec.volumes as Obj[]), { name: "host", ...volume }];
  const c = (spec.containers as Obj[])[0] as Obj;
  const m = { name: "host", mountPath: "/mnt/x", readOnly: true, ...mount };
  if (mounted) c.volumeMounts = [...(c.volumeMounts as Obj[]), m];
  return validate(carrier(kind).type, carrier(kind).build(spec));
}
const hostPath = (path: unknown) => ({ hostPath: { path } });

async function scanRules(files: Record<string, string>, name: string) {
  const dir = tempFiles(files);
  const { report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return rulesOf(report, name);
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
const manifest = (path: string) => {
  const spec = safePodSpec();
  const [c] = spec.containers as Obj[];
  return JSON.stringify({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "task" },
    spec: {
      template: {
        spec: {
          ...spec,
          volumes: [...(spec.volumes as Obj[]), { name: "h", hostPath: { path } }],
          containers: [{ ...c, volumeMounts: [{ name: "h", mountPath: "/h", readOnly: true }] }],
        },
      },
    },
  });
};

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods, and a hostPath job folder", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of KINDS) {
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
      expect(violated(pod(kind, hostPath(JOB), true, { readOnly: false })), kind).not.toContain(RULE);
    }
  });

  it.each([
    ["/", /it is the host's root folder/],
    ["/etc", /it is the host folder \/etc$/],
    ["//etc/./", /it is the host folder \/etc$/],
    ["/etc/ssl/certs", /it is inside the host folder \/etc$/],
    ["/proc/1/root", /inside the host folder \/proc$/],
    ["/sys/fs/cgroup", /inside the host folder \/sys$/],
    ["/usr/local/bin", /inside the host folder \/usr$/],
    ["/boot", /it is the host folder \/boot$/],
    ["/dev", /it is the host folder \/dev$/],
    ["/var/log/", /it is the host folder \/var\/log$/],
    ["/var/lib/kubelet/pods", /inside the host folder \/var\/lib\/kubelet$/],
    ["/var/lib/docker/volumes", /inside the host folder \/var\/lib\/docker$/],
    ["/var", /the folder contains the host folder \/var\/lib\/docker$/],
    ["/var/lib", /the folder contains the host folder/],
    ["/opt", /the folder contains the host folder \/opt\/cni$/],
    ["/root/.bashrc", /inside the host folder \/root$/],
    ["/home/dev/.ssh", /the host user's credentials \(\.ssh\)/],
    ["/home/dev/.aws/credentials", /the host user's credentials \(\.aws\)/],
    ["/home", /home folders' credentials/],
    ["/tmp/.X11-unix", /the X11 display's sockets/],
    ["/run/user/1000/gnupg", /an agent or display socket of a user's session/],
    ["C:\\", /the root of a host drive/],
    ["C:\\Windows\\System32", /lies in the host folder windows/],
  ])("refuses a docker.Container bind of %s, read-only or writable", (source, re) => {
    for (const readOnly of [true, false]) {
      const m = mine(bind(source, readOnly));
      expect(m).toHaveLength(1);
      expect(m[0]).toContain(`mounts host path ${source}: `);
      expect(m[0]?.replace(/ \[mounts\[0\]\]$/, "")).toMatch(re);
    }
  });

  it.each([
    [
      "a named pipe",
      { mounts: [{ type: "npipe", source: "\\\\.\\pipe\\lsass", target: "\\\\.\\pipe\\lsass" }] },
      /named pipe lsass/,
    ],
    [
      "volumes[].hostPath",
      { volumes: [{ hostPath: "/etc", containerPath: "/e", readOnly: true }] },
      /\/etc: it is the host folder \/etc \[volumes\[0\]\]/,
    ],
    [
      "a volumeName that is a path",
      { volumes: [{ volumeName: "/sys", containerPath: "/s" }] },
      /it is the host folder \/sys/,
    ],
    [
      "a local volume of a kernel filesystem (proc)",
      localVolume({ type: "proc", device: "proc" }),
      /host path \/proc: it is the host folder \/proc \[mounts\[0\]\.volumeOptions\.driverOptions\.type\]/,
    ],
    ["a local volume of sysfs", localVolume({ type: "sysfs", device: "sysfs" }), /host path \/sys: /],
    [
      "a local volume that binds /etc",
      localVolume({ type: "none", o: "bind", device: "/etc" }),
      /host path \/etc: .*\.driverOptions\.device\]/,
    ],
    [
      "a local overlay volume over /usr",
      localVolume({ type: "overlay", device: "overlay", o: "lowerdir=/usr,upperdir=/srv/u,workdir=/srv/w" }),
      /host path \/usr: .*\.driverOptions\.o\]/,
    ],
  ])("refuses %s on docker.Container", (_, props, re) => {
    expect(mine(docker(props))).toEqual([expect.stringMatching(re)]);
  });

  it.each(KINDS)(
    "refuses a %s that mounts /etc by hostPath, or /var/lib/kubelet as a subPath of /var/lib",
    (kind) => {
      expect(mine(pod(kind, hostPath("/etc")))).toEqual([
        expect.stringMatching(/^container "task" mounts host path \/etc: it is the host folder \/etc/),
      ]);
      expect(mine(pod(kind, hostPath("/var/lib"), true, { subPath: "kubelet" }))[0]).toMatch(
        /host path \/var\/lib\/kubelet: it is the host folder \/var\/lib\/kubelet/,
      );
    },
  );

  it.each(KINDS)("refuses a %s with a sensitive hostPath volume no container mounts", (kind) => {
    expect(mine(pod(kind, hostPath("/proc"), false))).toEqual([
      expect.stringMatching(/^pod volume "host" mounts host path \/proc: /),
    ]);
  });

  it.each([
    ["compose: a short-syntax bind", { "compose.yaml": compose("volumes: ['/etc:/host-etc:ro']") }, "app"],
    [
      "compose: a named volume that binds /",
      {
        "compose.yaml": `${compose("volumes: ['root:/r']")}volumes:\n  root:\n    driver_opts: { type: none, o: bind, device: / }\n`,
      },
      "app",
    ],
    ["an Engine API body: Binds", { "body.json": body({ Binds: ["/var/lib/docker:/d:ro"] }) }, "container#1"],
    [
      "an Engine API body: a proc volume",
      {
        "body.json": body({
          Mounts: [
            {
              Type: "volume",
              Source: "p",
              Target: "/p",
              VolumeOptions: { DriverConfig: { Options: { type: "proc", device: "proc" } } },
            },
          ],
        }),
      },
      "container#1",
    ],
    ["a Kubernetes Job", { "job.yaml": manifest("/sys") }, "task"],
  ])("scan refuses %s", async (_, files, name) => {
    expect(await scanRules(files, name)).toContain(RULE);
  });

  it("scan passes the same inputs with a folder of the project's own", async () => {
    expect(await scanRules({ "compose.yaml": compose(`volumes: ['${JOB}:/job']`) }, "app")).not.toContain(
      RULE,
    );
    expect(
      await scanRules({ "body.json": body({ Binds: ["/srv/data:/d:ro"] }) }, "container#1"),
    ).not.toContain(RULE);
    expect(await scanRules({ "job.yaml": manifest("/srv/data") }, "task")).not.toContain(RULE);
  });

  it.each([
    JOB,
    "/srv/data",
    "/etc-backup",
    "/usr-share-copy",
    "/var/lib/sandbox-projects",
    "/home/dev/project",
    "/tmp/job",
    "D:\\sandbox\\job",
  ])("passes a bind of %s, which is no system folder and holds none", (source) => {
    expect(violated(bind(source, false))).not.toContain(RULE);
  });

  it("passes what shows no host folder: tmpfs at /etc, a tmpfs local volume, named volumes, emptyDir and configMap", () => {
    expect(violated(docker({ tmpfs: { "/etc/app": "size=1m" } }))).not.toContain(RULE);
    expect(violated(docker(localVolume({ type: "tmpfs", device: "tmpfs", o: "size=10m" })))).not.toContain(
      RULE,
    );
    expect(
      violated(docker({ mounts: [{ type: "volume", source: "etc", target: "/etc/app" }] })),
    ).not.toContain(RULE);
    expect(violated(pod("Pod", { emptyDir: {} }, true, { mountPath: "/etc/app" }))).not.toContain(RULE);
    expect(
      violated(pod("Pod", { configMap: { name: "etc" } }, true, { mountPath: "/etc/app" })),
    ).not.toContain(RULE);
  });

  it("notes, without refusing, a host path not known until the update", () => {
    for (const o of [
      bind(UNKNOWN_WIRE as string),
      pod("Pod", hostPath(UNKNOWN_WIRE)),
      pod("Pod", hostPath(UNKNOWN_WIRE), false),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });
});

describe(`${RULE}: node folders that run code as root or hold the cluster's credentials`, () => {
  it.each([
    ["/var/spool/cron/crontabs", /inside the host folder \/var\/spool\/cron/],
    ["/var/spool", /contains the host folder \/var\/spool\/cron/],
    ["/var/spool/at", /the host folder \/var\/spool\/at/],
    ["/var/lib/cloud/scripts/per-boot", /inside the host folder \/var\/lib\/cloud/],
    ["/var/run/cloud-init/instance-data-sensitive.json", /inside the host folder \/run\/cloud-init/],
    ["/opt/bin/kubelet", /inside the host folder \/opt\/bin/],
    ["/opt", /contains the host folder/],
    ["/opt/libexec/kubernetes/kubelet-plugins/volume/exec", /inside the host folder \/opt\/libexec/],
    ["/opt/containerd", /the host folder \/opt\/containerd/],
    ["/opt/nri/plugins", /inside the host folder \/opt\/nri/],
    ["/home/kubernetes/bin", /inside the host folder \/home\/kubernetes/],
    ["/srv/kubernetes/pki", /inside the host folder \/srv\/kubernetes/],
    ["/srv", /contains the host folder \/srv\/kubernetes/],
    ["/var/lib/kubernetes/kubernetes-key.pem", /inside the host folder \/var\/lib\/kubernetes/],
    ["/var/lib/kube-proxy/kubeconfig", /inside the host folder \/var\/lib\/kube-proxy/],
    ["/var/lib/minikube/certs", /inside the host folder \/var\/lib\/minikube/],
    ["/var/snap/microk8s/current/credentials", /inside the host folder \/var\/snap\/microk8s/],
    ["/run/kubernetes", /the host folder \/run\/kubernetes/],
    ["/var/run/systemd/system", /inside the host folder \/run\/systemd/],
    ["/run/credentials/app.service", /inside the host folder \/run\/credentials/],
    ["/var/lib/systemd/credential.secret", /inside the host folder \/var\/lib\/systemd/],
    ["/var/lib/waagent", /the host folder \/var\/lib\/waagent/],
    ["/etc/kubernetes/pki", /inside the host folder \/etc/],
    ["/var/lib/kubelet/pki", /inside the host folder \/var\/lib\/kubelet/],
    ["/var/lib/rancher/k3s/server/tls", /inside the host folder \/var\/lib\/rancher/],
    ["/srv/git/.ssh", /a user's credentials \(\.ssh\)/],
    ["/var/lib/jenkins/.kube/config", /a user's credentials \(\.kube\)/],
    ["/data/keys/id_ed25519", /a user's credentials \(id_ed25519\)/],
    ["/root/.ssh/authorized_keys", /inside the host folder \/root/],
    ["/home/alice/.config/systemd/user", /programs the host user's session starts/],
  ])("refuses a bind of %s, read-only or writable, in any spelling", (source, re) => {
    for (const spelling of [source, `/${source}/`, source.replace(/\/([^/]+)$/, "/./x/../$1")]) {
      for (const readOnly of [true, false]) {
        const m = mine(bind(spelling, readOnly));
        expect(m, spelling).toHaveLength(1);
        expect(m[0]).toMatch(re);
      }
    }
    expect(violated(pod("Pod", hostPath(source)))).toContain(RULE);
    expect(violated(pod("Pod", hostPath(source), false))).toContain(RULE);
  });

  it.each([
    "/srv/reference",
    "/srv/sshd-docs",
    "/opt/app",
    "/var/spool/mail",
    "/srv/kubernetes-docs",
    "/var/lib/cloudy",
  ])("passes a bind of %s, which is no node or credential folder", (source) => {
    expect(violated(bind(source, true))).not.toContain(RULE);
  });
});
