import { describe, expect, it } from "vitest";
import { normalizeHostPath, runtimeSocketReason, sensitiveHostPathReason } from "../../policy/paths";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec } from "./fixtures";
import { validate, violated } from "./harness";

/** Every spelling of a runtime socket, or a folder that exposes one. */
const SOCKETS = [
  "/var/run/docker.sock",
  "/run/docker.sock",
  "/var/run/docker.sock/",
  "//var//run//docker.sock",
  "/var/run/./docker.sock",
  "/var/lib/../run/docker.sock",
  "/run/../var/run/docker.sock",
  "/../../run/docker.sock",
  " /var/run/docker.sock ",
  "/var/run",
  "/var/run/",
  "/run",
  "/var",
  "/",
  "/run/containerd/containerd.sock",
  "/var/run/containerd/containerd.sock",
  "/run/containerd",
  "/run/containerd/",
  "/run/containerd/io.containerd.runtime.v2.task",
  "/var/run/crio/crio.sock",
  "/run/crio",
  "/var/run/cri-dockerd.sock",
  "/run/cri-dockerd.sock",
  "/run/k3s/containerd/containerd.sock",
  "/run/podman/podman.sock",
  "/run/user/1000/docker.sock",
  "/run/user/1000",
  "/home/me/.docker/run/docker.sock",
  "/var/run/dockershim.sock",
  "/var/snap/microk8s/common/run/containerd.sock",
];

const NOT_SOCKETS = [
  "/var/lib/sandbox-projects/demo/jobs/1",
  "/srv/job",
  "/home/me/src",
  "/var/run-foo",
  "/runx/docker",
  "/tmp/job",
  "/var/lib/docker-sock-notes",
];

describe("runtimeSocketReason", () => {
  it.each(SOCKETS)("%s is a runtime socket exposure", (p) => {
    expect(runtimeSocketReason(p)).toBeDefined();
  });
  it.each(NOT_SOCKETS)("%s is not", (p) => {
    expect(runtimeSocketReason(p)).toBeUndefined();
  });
  it("normalizes //, ., .. and the trailing slash", () => {
    expect(normalizeHostPath("//var/./lib/../run//docker.sock/")).toBe("/var/run/docker.sock");
    expect(normalizeHostPath("/../..")).toBe("/");
  });
  it("explains the folder case", () => {
    expect(runtimeSocketReason("/var/run/")).toBe(
      "the folder contains the runtime socket /var/run/docker.sock",
    );
  });
});

describe("sensitiveHostPathReason", () => {
  it.each([
    "/",
    "/etc",
    "/etc/",
    "/proc/1",
    "/sys",
    "/usr/lib",
    "/var/lib/docker",
    "/var/lib",
    "/var",
    "/boot",
    "/root/.ssh",
    "/var/lib/kubelet/pods",
  ])("%s is sensitive", (p) => {
    expect(sensitiveHostPathReason(p)).toBeDefined();
  });
  it.each(["/var/lib/sandbox-projects/x", "/srv/job", "/home/me/job", "/tmp/x"])("%s is not", (p) => {
    expect(sensitiveHostPathReason(p)).toBeUndefined();
  });
});

describe("every socket spelling through every mount kind", () => {
  // `/run` also holds systemd's and cloud-init's folders, and MicroK8s's snap folder its credentials: both rules.
  const socketOnly = (p: string) => {
    const n = normalizeHostPath(p) ?? "";
    return !["/var", "/", "/run", "/var/run"].includes(n) && !n.startsWith("/var/snap/microk8s/");
  };
  const expected = (p: string) =>
    socketOnly(p)
      ? ["sandbox-disallow-runtime-socket"]
      : ["sandbox-disallow-runtime-socket", "sandbox-disallow-sensitive-host-mounts"];

  it.each(SOCKETS)("docker mounts[].source %s", (p) => {
    const c = copy(safeContainer());
    (c.mounts as object[]).push({ type: "bind", source: p, target: "/x", readOnly: true });
    expect(violated(validate(DOCKER, c))).toEqual(expected(p));
  });

  it.each(SOCKETS)("docker volumes[].hostPath %s", (p) => {
    const c = copy(safeContainer());
    c.volumes = [{ hostPath: p, containerPath: "/x", readOnly: true }];
    expect(violated(validate(DOCKER, c))).toEqual(expected(p));
  });

  it.each(SOCKETS)("kubernetes hostPath.path %s", (p) => {
    const spec = copy(safePodSpec());
    (spec.volumes as object[]).push({ name: "h", hostPath: { path: p } });
    (first(spec).volumeMounts as object[]).push({ name: "h", mountPath: "/x", readOnly: true });
    expect(violated(validate("kubernetes:apps/v1:DaemonSet", carrier("DaemonSet").build(spec)))).toEqual(
      expected(p),
    );
  });

  it("a docker volume mount (not a bind) named like a socket is not a host path", () => {
    const c = copy(safeContainer());
    (c.mounts as object[]).push({ type: "volume", source: "docker.sock", target: "/x" });
    expect(violated(validate(DOCKER, c))).toEqual([]);
  });

  it("prints the path and the reason", () => {
    const c = copy(safeContainer());
    c.volumes = [
      { hostPath: "/var/run/../run/docker.sock/", containerPath: "/var/run/docker.sock", readOnly: true },
    ];
    expect(validate(DOCKER, c).violations.map((v) => v.message)).toEqual([
      'container "fixture" mounts host path /var/run/../run/docker.sock/ at /var/run/docker.sock: it is the runtime socket /run/docker.sock [volumes[0]]',
    ]);
  });
});
