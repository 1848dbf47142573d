/**
 * Class 5: what a Compose service runs besides its container (docker/compose pkg/compose/pre_start.go,
 * hook.go, apiSocket.go, plugins.go, build_bake.go): findings B8, B9, B10, B15.
 */
import { describe, expect, it } from "vitest";
import { compose } from "../fixtures";
import { blocked, cases, passes, scanFiles } from "../harness";

cases("use_api_socket, hooks, providers, builds (findings B8, B9, B10, B15)", [
  {
    name: "use_api_socket: true binds the Docker socket",
    files: { "compose.yaml": compose("app", "use_api_socket: true") },
    plain: { "compose.yaml": compose("app", "volumes: [/var/run/docker.sock:/var/run/docker.sock]") },
    want: blocked("sandbox-disallow-runtime-socket", "app"),
  },
  {
    name: "a privileged root pre_start hook is a container of its own",
    files: {
      "compose.yaml": compose(
        "app",
        "pre_start:\n  - image: busybox:1.36\n    command: [id]\n    user: root\n    privileged: true",
      ),
    },
    want: blocked("sandbox-disallow-privileged", "app/pre_start[0]"),
  },
  {
    name: "a pre_start hook gets none of the service's hardening (docker/compose v5)",
    files: { "compose.yaml": compose("app", 'pre_start:\n  - command: [id]\n    user: "1000"') },
    want: blocked("sandbox-require-drop-net-admin", "app/pre_start[0]"),
  },
  {
    name: "a pre_start hook sees the service's mounts (VolumesFrom)",
    files: { "compose.yaml": compose("app", "volumes: [/etc:/host-etc:ro]\npre_start:\n  - command: [id]") },
    want: blocked("sandbox-disallow-sensitive-host-mounts", "app/pre_start[0]"),
  },
  ...["post_start", "pre_stop"].map((key) => ({
    name: `a ${key} exec as root`,
    files: { "compose.yaml": compose("app", `${key}:\n  - command: [id]\n    user: root`) },
    want: blocked("sandbox-require-non-root", `app/${key}[0]`),
  })),
  {
    name: "a privileged post_start exec",
    files: { "compose.yaml": compose("app", "post_start:\n  - command: [id]\n    privileged: true") },
    want: blocked("sandbox-disallow-privileged", "app/post_start[0]"),
  },
  {
    name: "a develop.watch sync+exec as root",
    files: {
      "compose.yaml": compose(
        "app",
        "develop:\n  watch:\n    - path: ./src\n      action: sync+exec\n      target: /src\n      exec:\n        command: [id]\n        user: '0'",
      ),
    },
    want: blocked("sandbox-require-non-root", "app/develop.watch[0].exec"),
  },
  {
    name: "a post_start exec with the service's user passes (no false denial)",
    files: { "compose.yaml": compose("app", "post_start:\n  - command: [echo, started]") },
    want: passes,
  },
  {
    name: "build on the host network",
    files: {
      "compose.yaml": compose("app", "build: {context: ., network: host}"),
      Dockerfile: "FROM busybox\n",
    },
    want: blocked("sandbox-disallow-host-namespaces", "app/build"),
  },
  ...["privileged: true", "entitlements: [security.insecure]"].map((opt) => ({
    name: `build with ${opt}`,
    files: { "compose.yaml": compose("app", `build: {context: ., ${opt}}`), Dockerfile: "FROM busybox\n" },
    want: blocked("sandbox-disallow-privileged", "app/build"),
  })),
  {
    name: "build context / and additional_contexts from /var/run",
    files: {
      "compose.yaml": compose("app", "build:\n  context: /\n  additional_contexts: {host: /var/run}"),
    },
    want: blocked("sandbox-disallow-sensitive-host-mounts", "app/build"),
  },
  {
    name: "a plain build in the project folder passes (no false denial)",
    files: {
      "compose.yaml": compose("app", "build: {context: ., dockerfile: Dockerfile}"),
      Dockerfile: "FROM busybox\n",
    },
    want: passes,
  },
]);

describe("provider services (finding B10)", () => {
  it("a provider service runs a host program: refused, never a pass", async () => {
    const r = await scanFiles({
      "compose.yaml": compose("app", "provider:\n  type: bash\n  options: {x: y}"),
    });
    expect(r.code).toBe(2);
    expect(r.report.errors.map((e) => e.message).join("\n")).toMatch(
      /services\.app\.provider\.type is "bash": docker compose runs that host program/,
    );
  });
});
