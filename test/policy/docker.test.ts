import { describe, expect, it } from "vitest";
import { copy, DOCKER, safeContainer } from "./fixtures";
import { remediateThenValidate, validate, violated } from "./harness";

type Props = Record<string, unknown>;

/** One field broken per row: [what, change, exact violated rule ids]. */
const CASES: [string, (p: Props) => void, string[]][] = [
  [
    "a published port",
    (p) => (p.ports = [{ internal: 8080, external: 8080 }]),
    ["sandbox-disallow-exposed-ports"],
  ],
  [
    "a port with a random host port",
    (p) => (p.ports = [{ internal: 22 }]),
    ["sandbox-disallow-exposed-ports"],
  ],
  ["publishAllPorts", (p) => (p.publishAllPorts = true), ["sandbox-disallow-exposed-ports"]],
  [
    "networkMode host",
    (p) => (p.networkMode = "host"),
    ["sandbox-disallow-exposed-ports", "sandbox-disallow-host-namespaces"],
  ],
  [
    "networkMode container:<id>",
    (p) => (p.networkMode = "container:abc123"),
    ["sandbox-disallow-host-namespaces"],
  ],
  ["pidMode host", (p) => (p.pidMode = "host"), ["sandbox-disallow-host-namespaces"]],
  ["ipcMode host", (p) => (p.ipcMode = "host"), ["sandbox-disallow-host-namespaces"]],
  ["usernsMode host", (p) => (p.usernsMode = "host"), ["sandbox-disallow-host-namespaces"]],
  ["cgroupnsMode host", (p) => (p.cgroupnsMode = "host"), ["sandbox-disallow-host-namespaces"]],
  [
    "the Docker socket bind",
    (p) => (p.volumes = [{ hostPath: "/var/run/docker.sock", containerPath: "/var/run/docker.sock" }]),
    ["sandbox-disallow-runtime-socket", "sandbox-require-single-job-mount"],
  ],
  [
    "the Docker socket bind read-only",
    (p) => (p.volumes = [{ hostPath: "/run/docker.sock", containerPath: "/s", readOnly: true }]),
    ["sandbox-disallow-runtime-socket"],
  ],
  ["a secret-named variable", (p) => (p.envs = ["OPENAI_API_KEY=abc"]), ["sandbox-disallow-secret-env"]],
  [
    "no drop list",
    (p) => (p.capabilities = undefined),
    ["sandbox-require-drop-all", "sandbox-require-drop-net-admin"],
  ],
  [
    "drops without NET_ADMIN",
    (p) => (p.capabilities = { drops: ["NET_RAW", "MKNOD"] }),
    ["sandbox-require-drop-all", "sandbox-require-drop-net-admin"],
  ],
  [
    "the seed six",
    (p) =>
      (p.capabilities = {
        drops: ["net_raw", "CAP_MKNOD", "Sys_Chroot", "SETFCAP", "setpcap", "cap_net_admin"],
      }),
    [],
  ],
  [
    "adds NET_ADMIN back",
    (p) => (p.capabilities = { drops: ["ALL"], adds: ["NET_ADMIN"] }),
    ["sandbox-disallow-added-capabilities", "sandbox-require-drop-net-admin"],
  ],
  [
    "adds SYS_ADMIN",
    (p) => (p.capabilities = { drops: ["ALL"], adds: ["CAP_SYS_ADMIN"] }),
    ["sandbox-disallow-added-capabilities", "sandbox-disallow-privilege-escalation"],
  ],
  [
    "privileged",
    (p) => (p.privileged = true),
    ["sandbox-disallow-privilege-escalation", "sandbox-disallow-privileged"],
  ],
  ["no no-new-privileges", (p) => (p.securityOpts = []), ["sandbox-disallow-privilege-escalation"]],
  [
    "no-new-privileges:false",
    (p) => (p.securityOpts = ["no-new-privileges:false"]),
    ["sandbox-disallow-privilege-escalation"],
  ],
  ["no-new-privileges=true", (p) => (p.securityOpts = ["no-new-privileges=true"]), []],
  ["bare no-new-privileges", (p) => (p.securityOpts = ["no-new-privileges"]), []],
  [
    "seccomp=unconfined",
    (p) => (p.securityOpts = ["no-new-privileges", "seccomp=unconfined"]),
    ["sandbox-disallow-unconfined-seccomp"],
  ],
  [
    "seccomp:unconfined",
    (p) => (p.securityOpts = ["no-new-privileges", "seccomp:unconfined"]),
    ["sandbox-disallow-unconfined-seccomp"],
  ],
  [
    "a seccomp profile path (the daemon reads the value as the profile's JSON, so it cannot load it)",
    (p) => (p.securityOpts = ["no-new-privileges", "seccomp=/etc/docker/seccomp.json"]),
    ["sandbox-disallow-unconfined-seccomp"],
  ],
  [
    "an inline allow-list seccomp profile",
    (p) =>
      (p.securityOpts = [
        "no-new-privileges",
        'seccomp={"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["read"],"action":"SCMP_ACT_ALLOW"}]}',
      ]),
    [],
  ],
  [
    "apparmor=unconfined",
    (p) => (p.securityOpts = ["no-new-privileges", "apparmor=unconfined"]),
    ["sandbox-disallow-unconfined-lsm"],
  ],
  [
    "apparmor:unconfined",
    (p) => (p.securityOpts = ["no-new-privileges", "apparmor:unconfined"]),
    ["sandbox-disallow-unconfined-lsm"],
  ],
  [
    "label=disable",
    (p) => (p.securityOpts = ["no-new-privileges", "label=disable"]),
    ["sandbox-disallow-unconfined-lsm"],
  ],
  [
    "label:disable",
    (p) => (p.securityOpts = ["no-new-privileges", "label:disable"]),
    ["sandbox-disallow-unconfined-lsm"],
  ],
  [
    "label=type:spc_t",
    (p) => (p.securityOpts = ["no-new-privileges", "label=type:spc_t"]),
    ["sandbox-disallow-unconfined-lsm"],
  ],
  [
    "systempaths=unconfined",
    (p) => (p.securityOpts = ["no-new-privileges", "systempaths=unconfined"]),
    ["sandbox-disallow-unmasked-proc"],
  ],
  ["user root", (p) => (p.user = "root"), ["sandbox-require-non-root"]],
  ["user 0", (p) => (p.user = "0"), ["sandbox-require-non-root"]],
  ["user 0:0", (p) => (p.user = "0:0"), ["sandbox-require-non-root"]],
  ["user 1000:0", (p) => (p.user = "1000:0"), ["sandbox-require-non-root"]],
  // No group: the gid is the image's passwd entry's, 0 when there is none (moby/sys/user GetExecUser).
  ["user 1000 (no group)", (p) => (p.user = "1000"), ["sandbox-require-non-root"]],
  ["user by name (no group)", (p) => (p.user = "app"), ["sandbox-require-non-root"]],
  ["user by name with a group", (p) => (p.user = "app:app"), []],
  ["no user", (p) => (p.user = undefined), ["sandbox-require-non-root"]],
  ["groupAdds root", (p) => (p.groupAdds = ["root"]), ["sandbox-require-non-root"]],
  ["writable root", (p) => (p.readOnly = false), ["sandbox-require-readonly-rootfs"]],
  ["no memory limit", (p) => (p.memory = undefined), ["sandbox-require-resource-limits"]],
  ["no cpu limit", (p) => (p.cpus = undefined), ["sandbox-require-resource-limits"]],
  [
    "cpuQuota instead of cpus",
    (p) => Object.assign(p, { cpus: undefined, cpuQuota: 50000, cpuPeriod: 100000 }),
    [],
  ],
  ["restart always", (p) => (p.restart = "always"), ["sandbox-require-no-restart"]],
  ["restart unless-stopped", (p) => (p.restart = "unless-stopped"), ["sandbox-require-no-restart"]],
  ["restart on-failure", (p) => (p.restart = "on-failure"), ["sandbox-require-no-restart"]],
  ["restart unset", (p) => (p.restart = undefined), []],
  ["a device", (p) => (p.devices = [{ hostPath: "/dev/kvm" }]), ["sandbox-disallow-devices"]],
  ["gpus", (p) => (p.gpus = "all"), ["sandbox-disallow-devices"]],
  [
    "deviceRequests",
    (p) => (p.deviceRequests = [{ driver: "nvidia", count: -1 }]),
    ["sandbox-disallow-devices"],
  ],
  ["a sysctl", (p) => (p.sysctls = { "net.ipv4.ip_forward": "1" }), ["sandbox-disallow-sysctls"]],
  [
    "/etc bind",
    (p) => (p.volumes = [{ hostPath: "/etc", containerPath: "/host/etc", readOnly: true }]),
    ["sandbox-disallow-sensitive-host-mounts"],
  ],
  [
    "a second writable bind",
    (p) => (p.volumes = [{ hostPath: "/home/me/src", containerPath: "/src" }]),
    ["sandbox-require-single-job-mount"],
  ],
  [
    "rshared propagation",
    (p) =>
      ((p.mounts as Props[])[0] = {
        type: "bind",
        source: "/srv/job",
        target: "/job",
        bindOptions: { propagation: "rshared" },
      }),
    ["sandbox-require-single-job-mount"],
  ],
  ["a named volume", (p) => (p.volumes = [{ volumeName: "cache", containerPath: "/cache" }]), []],
];

describe("docker.Container: each broken field gives exactly its violations", () => {
  it.each(CASES)("%s", (_what, change, expected) => {
    const p = copy(safeContainer());
    change(p);
    expect(violated(validate(DOCKER, p))).toEqual(expected);
  });
});

describe("docker.Container messages", () => {
  it("names the published port and the host port", () => {
    const p = copy(safeContainer());
    p.ports = [{ internal: 8080, external: 18080, ip: "0.0.0.0" }];
    expect(validate(DOCKER, p).violations).toEqual([
      {
        policy: "sandbox-disallow-exposed-ports",
        message: 'container "fixture" publishes port 8080 on host port 18080 on 0.0.0.0 [ports[0]]',
      },
    ]);
  });

  it("requires the runtime class when configured", () => {
    const p = copy(safeContainer());
    const config = { "sandbox-require-runtime-class": { allowed: ["runsc"] } };
    expect(violated(validate(DOCKER, p, { config }))).toEqual(["sandbox-require-runtime-class"]);
    p.runtime = "runsc";
    expect(violated(validate(DOCKER, p, { config }))).toEqual([]);
  });

  it("checks writable binds against the job roots", () => {
    const p = copy(safeContainer());
    const config = { "sandbox-require-single-job-mount": { jobRoots: ["/srv/jobs"] } };
    expect(validate(DOCKER, p, { config }).violations.map((v) => v.message)).toEqual([
      'container "fixture" mounts /var/lib/sandbox-projects/demo/jobs/1 writable, outside the job roots [/srv/jobs] [mounts[0]]',
    ]);
  });
});

describe("docker.Container remediation (enforcement level remediate)", () => {
  const all = { enforcementLevel: "remediate" };
  const config = {
    "sandbox-require-drop-net-admin": all,
    "sandbox-disallow-privilege-escalation": all,
    "sandbox-require-readonly-rootfs": all,
  };

  it("adds NET_ADMIN to drops, no-new-privileges and read-only root", () => {
    const p = copy(safeContainer());
    p.capabilities = { drops: ["NET_RAW"], adds: ["net_admin", "CHOWN"] };
    p.securityOpts = undefined;
    p.readOnly = undefined;
    const { props, outcome } = remediateThenValidate(DOCKER, p, {
      config,
      selection: { only: Object.keys(config) },
    });
    expect(props).toMatchObject({
      capabilities: { drops: ["NET_RAW", "NET_ADMIN"], adds: ["CHOWN"] },
      securityOpts: ["no-new-privileges:true"],
      readOnly: true,
    });
    expect(violated(outcome)).toEqual([]);
  });

  it("leaves an added ALL for a person", () => {
    const p = copy(safeContainer());
    p.capabilities = { drops: ["ALL"], adds: ["ALL"] };
    const { outcome } = remediateThenValidate(DOCKER, p, {
      config,
      selection: { only: Object.keys(config) },
    });
    // ALL re-adds NET_ADMIN and SYS_ADMIN: both stay violations.
    expect(violated(outcome)).toEqual([
      "sandbox-disallow-privilege-escalation",
      "sandbox-require-drop-net-admin",
    ]);
  });
});
