/**
 * Class 6: host paths and runtime endpoints. The kernel resolves `//`, `.`, `..` and a trailing `/` (the kubelet and
 * dockerd hand the path to mount(2) after filepath.Clean), `/var/run` is a link to `/run`, and a runtime endpoint is
 * any socket (or folder holding one) of Docker (rootful and rootless), Podman, containerd, CRI-O, k3s, BuildKit,
 * cri-dockerd, systemd's private bus or D-Bus, or a Windows named pipe. Path spellings are generated.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { compose, engineBody, pod } from "./fixtures";
import { assertVerdict, blocked, cases, passes, scanFiles } from "./harness";

const ENDPOINTS = [
  "/var/run/docker.sock",
  "/run/docker.sock",
  "/run/user/1000/docker.sock",
  "/run/user/1000/podman/podman.sock",
  "/run/podman/podman.sock",
  "/run/containerd/containerd.sock",
  "/var/run/crio/crio.sock",
  "/run/k3s/containerd/containerd.sock",
  "/run/buildkit/buildkitd.sock",
  "/var/run/cri-dockerd.sock",
  "/run/systemd/private",
  "/run/dbus/system_bus_socket",
  "/var/run/dbus/system_bus_socket",
  "/run/containerd",
  "/var/run/crio",
];

/** An equivalent spelling of an absolute path: doubled slashes, `/./`, `/x/../`, a trailing slash. */
const spelling = (path: string) =>
  fc
    .array(fc.constantFrom("slash", "dot", "dotdot", "plain"), {
      minLength: path.split("/").length - 1,
      maxLength: 12,
    })
    .chain((ops) =>
      fc.boolean().map((trailing) => {
        const parts = path.split("/").filter((p) => p !== "");
        const out = parts.map((p, i) => {
          const op = ops[i] ?? "plain";
          if (op === "slash") return `/${p}`;
          if (op === "dot") return `./${p}`;
          if (op === "dotdot") return `zz/../${p}`;
          return p;
        });
        return `/${out.join("/")}${trailing ? "/" : ""}`;
      }),
    );

const k8sHostPath = (path: string, type = "") =>
  pod("p", {
    container: "volumeMounts: [{name: h, mountPath: /h}]",
    spec: `volumes:\n  - name: h\n    hostPath:\n      path: '${path}'${type === "" ? "" : `\n      type: ${type}`}`,
  });

describe("class 6: runtime endpoints in any spelling (generated)", () => {
  it("every endpoint, plain and respelled, is blocked as a Kubernetes hostPath", async () => {
    for (const e of ENDPOINTS)
      assertVerdict(await scanFiles({ "pod.yaml": k8sHostPath(e) }), blocked(undefined, "p"));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS).chain((e) => spelling(e)),
        async (p) => {
          assertVerdict(await scanFiles({ "pod.yaml": k8sHostPath(p) }), blocked(undefined, "p"));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("every endpoint, respelled, is blocked as a Compose bind", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS).chain((e) => spelling(e)),
        async (p) => {
          assertVerdict(
            await scanFiles({ "compose.yaml": compose("app", `volumes:\n  - "${p}:/h"`) }),
            blocked(undefined, "app"),
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  it("every endpoint, respelled, is blocked as an Engine API bind", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS).chain((e) => spelling(e)),
        async (p) => {
          assertVerdict(
            await scanFiles({ "create.json": engineBody({}, { Binds: [`${p}:/h`] }) }),
            blocked(),
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  it("a read-only data folder in any spelling passes (no false denial)", async () => {
    const ro = (p: string) =>
      pod("p", {
        container: "volumeMounts: [{name: h, mountPath: /h, readOnly: true}]",
        spec: `volumes:\n  - name: h\n    hostPath:\n      path: "${p}"\n      type: Directory`,
      });
    assertVerdict(await scanFiles({ "pod.yaml": ro("/srv/data") }), passes);
    await fc.assert(
      fc.asyncProperty(spelling("/srv/data"), async (p) => {
        assertVerdict(await scanFiles({ "pod.yaml": ro(p) }), passes);
      }),
      { numRuns: 25 },
    );
  });
});

const plainSock = { "create.json": engineBody({}, { Binds: ["/var/run/docker.sock:/var/run/docker.sock"] }) };

cases("class 6: Windows named pipes and volume-driver binds", [
  {
    name: "Engine API Mounts type npipe \\\\.\\pipe\\docker_engine",
    files: {
      "create.json": engineBody(
        {},
        {
          Mounts: [
            { Type: "npipe", Source: "\\\\.\\pipe\\docker_engine", Target: "\\\\.\\pipe\\docker_engine" },
          ],
        },
      ),
    },
    plain: plainSock,
    want: blocked("sandbox-disallow-runtime-socket"),
  },
  {
    name: "Engine API Binds with a forward-slash pipe //./pipe/docker_engine",
    files: { "create.json": engineBody({}, { Binds: ["//./pipe/docker_engine://./pipe/docker_engine"] }) },
    plain: plainSock,
    want: blocked("sandbox-disallow-runtime-socket"),
  },
  {
    name: "Compose long syntax type: npipe",
    files: {
      "compose.yaml": compose(
        "app",
        "volumes:\n  - type: npipe\n    source: \\\\.\\pipe\\docker_engine\n    target: \\\\.\\pipe\\docker_engine",
      ),
    },
    plain: { "compose.yaml": compose("app", "volumes: [/var/run/docker.sock:/var/run/docker.sock]") },
    want: blocked("sandbox-disallow-runtime-socket", "app"),
  },
  {
    name: "Kubernetes (Windows node) hostPath \\\\.\\pipe\\containerd-containerd",
    files: { "pod.yaml": k8sHostPath("\\\\.\\pipe\\containerd-containerd") },
    plain: { "pod.yaml": k8sHostPath("/run/containerd/containerd.sock") },
    want: blocked("sandbox-disallow-runtime-socket", "p"),
  },
  {
    name: "Engine API Mounts type volume whose local driver binds /var/run",
    files: {
      "create.json": engineBody(
        {},
        {
          Mounts: [
            {
              Type: "volume",
              Source: "run",
              Target: "/r",
              VolumeOptions: {
                DriverConfig: { Name: "local", Options: { type: "none", o: "bind", device: "/var/run" } },
              },
            },
          ],
        },
      ),
    },
    plain: { "create.json": engineBody({}, { Binds: ["/var/run:/r"] }) },
    want: blocked("sandbox-disallow-runtime-socket"),
  },
  {
    name: "Kubernetes hostPath type: Socket at a rootless user's docker.sock",
    files: { "pod.yaml": k8sHostPath("/run/user/1000/docker.sock", "Socket") },
    plain: { "pod.yaml": k8sHostPath("/var/run/docker.sock") },
    want: blocked("sandbox-disallow-runtime-socket", "p"),
  },
]);
