/**
 * Class 6 (host paths): per-user systemd and D-Bus endpoints (`/run/user/<uid>/bus`, the user manager's
 * `/run/user/<uid>/systemd/private`) start processes on the host for the peer uid, which is the task's own without a
 * user namespace, and a read-only bind does not stop connect(2) on a socket; containerd's NRI socket, CNI plugins
 * (run as root), BuildKit, nerdctl and LXC state, rootless data-roots under ~/.local/share and ostree's /var/roothome
 * and /var/usrlocal are the host's runtime and code. Each is judged the same in every format and spelling.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DOCKER, safeContainer } from "../../policy/fixtures";
import { validate, violated } from "../../policy/harness";
import { compose, engineBody, pod } from "../fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "../harness";

const SOCKET = "sandbox-disallow-runtime-socket";
const SENSITIVE = "sandbox-disallow-sensitive-host-mounts";

/** The same host path in the three scanned formats and the pack, read-only. */
async function everyFormat(path: string, rule: string): Promise<void> {
  const want = blocked(rule);
  assertVerdict(await scanFiles({ "create.json": engineBody({}, { Binds: [`${path}:/h:ro`] }) }), want);
  assertVerdict(await scanFiles({ "compose.yaml": compose("app", `volumes: ["${path}:/h:ro"]`) }), want);
  const k8s = pod("p", {
    container: "volumeMounts: [{name: h, mountPath: /h, readOnly: true}]",
    spec: `volumes: [{name: h, hostPath: {path: "${path}"}}]`,
  });
  assertVerdict(await scanFiles({ "pod.yaml": k8s }), want);
  const mounts = [{ type: "bind", source: path, target: "/h", readOnly: true }];
  expect(violated(validate(DOCKER, { ...safeContainer(), mounts }))).toContain(rule);
}

/** Spellings the kernel resolves to the same path. */
const spell = (p: string) =>
  fc.constantFrom(p, `/var${p}`, p.replace("/run/", "//run/"), `${p}/`, p.replace("/user/", "/user/./"));

describe("class 6: per-user systemd and D-Bus endpoints, any uid (generated)", () => {
  it("the plain rootful twin /run/systemd/private is a runtime endpoint", async () => {
    await everyFormat("/run/systemd/private", SOCKET);
  });
  it("/run/user/<uid>/bus and /run/user/<uid>/systemd/private get the same verdict", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(
            fc.constantFrom("0", "1000", "1001", "65534"),
            fc.constantFrom("bus", "systemd/private", "systemd"),
          )
          .chain(([uid, leaf]) => spell(`/run/user/${uid}/${leaf}`)),
        async (path) => {
          await everyFormat(path, SOCKET);
        },
      ),
      { numRuns: 12 },
    );
  });
});

describe("class 6: runtime state and host code that were missing", () => {
  it.each([
    ["/run/nri/nri.sock", SOCKET],
    ["/var/run/nri", SOCKET],
    ["/home/me/.local/share/docker", SOCKET],
    ["/home/me/.local/share/containerd", SOCKET],
    ["/home/me/.local/share/buildkit", SOCKET],
    ["/home/me/.local/share", SOCKET],
    ["/home/me/.local", SOCKET],
    ["/opt/cni/bin", SENSITIVE],
    ["/opt", SENSITIVE],
    ["/var/lib/buildkit", SENSITIVE],
    ["/var/lib/nerdctl", SENSITIVE],
    ["/var/lib/lxc", SENSITIVE],
    ["/var/lib/cni", SENSITIVE],
    ["/var/roothome", SENSITIVE],
    ["/var/usrlocal/bin", SENSITIVE],
  ])("%s", async (path, rule) => {
    await everyFormat(path, rule);
  });
  it("an ordinary data folder, read-only, still passes (no new false denial)", async () => {
    assertVerdict(await scanFiles({ "create.json": engineBody({}, { Binds: ["/srv/data:/h:ro"] }) }), passes);
    assertVerdict(
      await scanFiles({ "compose.yaml": compose("app", 'volumes: ["/srv/data:/h:ro"]') }),
      passes,
    );
  });
});
