/**
 * Class 5 and 6: host paths as compose-go resolves them (paths/resolve.go, paths/windows_path.go,
 * paths/home.go, transform/external.go): findings B4, B6, B7, B13.
 */
import { describe, expect, it } from "vitest";
import { compose } from "../fixtures";
import { assertVerdict, blocked, cases, passes, scanFiles } from "../harness";

const NETWORKED = compose("app").replace("    network_mode: none\n", "");

cases("Windows host paths are kept as written (finding B4)", [
  {
    name: "short syntax named pipe \\\\.\\pipe\\docker_engine",
    files: {
      "compose.yaml": compose("app", "volumes:\n  - \\\\.\\pipe\\docker_engine:\\\\.\\pipe\\docker_engine"),
    },
    plain: {
      "compose.yaml": compose(
        "app",
        "volumes:\n  - type: npipe\n    source: \\\\.\\pipe\\docker_engine\n    target: \\\\.\\pipe\\docker_engine",
      ),
    },
    want: blocked("sandbox-disallow-runtime-socket", "app"),
  },
  {
    name: "long syntax bind of C:\\",
    files: {
      "compose.yaml": compose("app", "volumes:\n  - type: bind\n    source: 'C:\\'\n    target: /host"),
    },
    want: blocked("sandbox-disallow-sensitive-host-mounts", "app"),
  },
  {
    name: "short syntax C:\\ProgramData\\docker",
    files: { "compose.yaml": compose("app", "volumes:\n  - C:\\ProgramData\\docker:/d") },
    want: blocked("sandbox-disallow-runtime-socket", "app"),
  },
  {
    name: "a secret whose file is the named pipe",
    files: {
      "compose.yaml": compose("app", "secrets: [s]", "secrets:\n  s:\n    file: \\\\.\\pipe\\docker_engine"),
    },
    want: blocked("sandbox-disallow-runtime-socket", "app"),
  },
]);

cases("a named volume's device as compose-go resolves it (finding B6)", [
  ...["var/run", "./var/run"].map((device) => ({
    name: `device ${device} without driver: local is sent as written (dockerd reads it from /)`,
    files: {
      "compose.yaml": compose(
        "app",
        "volumes: [rv:/d]",
        `volumes:\n  rv:\n    driver_opts: {type: none, o: bind, device: ${device}}`,
      ),
    },
    plain: { "compose.yaml": compose("app", "volumes: [/var/run:/d]") },
    want: blocked("sandbox-disallow-runtime-socket", "app"),
  })),
  {
    name: "driver: local and o: bind exactly resolve a relative device in the project (no false denial)",
    files: {
      "compose.yaml": compose(
        "app",
        "volumes: [rv:/d:ro]",
        "volumes:\n  rv:\n    driver: local\n    driver_opts: {type: none, o: bind, device: ./var/run}",
      ),
    },
    want: passes,
  },
]);

cases("the older external: {name: x} spelling (finding B7)", [
  {
    name: "a service network external: {name: host}",
    files: {
      "compose.yaml":
        NETWORKED.replace("cpus: 0.5", "cpus: 0.5\n    networks: [hn]") +
        "networks:\n  hn:\n    external:\n      name: host\n",
    },
    plain: {
      "compose.yaml":
        NETWORKED.replace("cpus: 0.5", "cpus: 0.5\n    networks: [hn]") +
        "networks:\n  hn:\n    name: host\n    external: true\n",
    },
    want: blocked("sandbox-disallow-host-namespaces", "app"),
  },
  {
    name: "the default network external: {name: host}",
    files: { "compose.yaml": `${NETWORKED}networks:\n  default:\n    external: {name: host}\n` },
    want: blocked("sandbox-disallow-host-namespaces", "app"),
  },
  {
    name: "name and external.name that disagree are refused, as compose refuses them",
    files: { "compose.yaml": `${NETWORKED}networks:\n  default:\n    name: x\n    external: {name: host}\n` },
    want: { verdict: "blocked", engineRefuses: true },
  },
]);

describe("~ (finding B13)", () => {
  it("~ is judged as a home folder whatever HOME is, and the HOME used is stated", async () => {
    for (const home of ["/var/lib/jenkins", "/srv/ci", undefined]) {
      const before = process.env.HOME;
      if (home === undefined) delete process.env.HOME;
      else process.env.HOME = home;
      try {
        const r = await scanFiles({ "compose.yaml": compose("app", 'volumes: ["~:/home/host:ro"]') });
        assertVerdict(r, blocked("sandbox-disallow-runtime-socket", "app"));
        expect(r.report.assumptions.map((a) => a.statement).join("\n")).toContain("`~` is the home folder");
      } finally {
        if (before === undefined) delete process.env.HOME;
        else process.env.HOME = before;
      }
    }
  });
});
