/**
 * Class 5: Compose as `docker compose` (docker/compose v5, compose-go v2.16.2) loads and runs it. Each
 * case is a project folder scanned as `scan --format json .`; engine behaviour checked in compose-go and
 * docker/compose sources (cli/options.go, paths/resolve.go, transform/external.go, pkg/compose/pre_start.go,
 * hook.go, apiSocket.go, plugins.go, build_bake.go).
 */
import { describe, expect, it } from "vitest";
import { compose } from "../fixtures";
import { assertVerdict, blocked, type Case, cases, passes, scanFiles } from "../harness";

const BASE = compose("app");
/** The safe service with network_mode taken out (it joins the project's networks). */
const NETWORKED = BASE.replace("    network_mode: none\n", "");

cases("the files docker compose loads in a folder (findings B1, B2)", [
  {
    name: "compose.override.yaml puts the service on the host network (an override with no services)",
    files: {
      "compose.yaml": NETWORKED,
      "compose.override.yaml": "networks:\n  default:\n    name: host\n    external: true\n",
    },
    plain: { "compose.yaml": BASE.replace("network_mode: none", "network_mode: host") },
    want: blocked("sandbox-disallow-host-namespaces", "app"),
  },
  {
    name: "compose.override.yaml makes a named volume a bind of /",
    files: {
      "compose.yaml": compose("app", "volumes: [data:/d]", "volumes: {data: {}}"),
      "compose.override.yaml": `${BASE}volumes:\n  data:\n    driver_opts: {type: none, o: bind, device: /}\n`,
    },
    plain: { "compose.yaml": compose("app", "volumes: [/:/d]") },
    want: blocked("sandbox-disallow-sensitive-host-mounts", "app"),
  },
  ...["compose.override.yml", "docker-compose.override.yml", "docker-compose.override.yaml"].map(
    (name): Case => ({
      name: `${name} adds privileged: true`,
      files: { "compose.yaml": BASE, [name]: "services:\n  app:\n    privileged: true\n" },
      want: blocked("sandbox-disallow-privileged", "app"),
    }),
  ),
  {
    name: "docker-compose.yml with its override (the older names)",
    files: {
      "docker-compose.yml": BASE,
      "docker-compose.override.yml": "services:\n  app:\n    privileged: true\n",
    },
    want: blocked("sandbox-disallow-privileged", "app"),
  },
  {
    name: "COMPOSE_FILE in .env adds a file with any name",
    files: {
      "compose.yaml": BASE,
      ".env": "COMPOSE_FILE=compose.yaml:extra.txt\n",
      "extra.txt": "services: {app: {privileged: true}}\n",
    },
    want: blocked("sandbox-disallow-privileged", "app"),
  },
  {
    name: "COMPOSE_FILE and COMPOSE_PATH_SEPARATOR in .env name only files the walk does not read",
    files: {
      ".env": "COMPOSE_PATH_SEPARATOR=;\nCOMPOSE_FILE=a.txt;b.conf\n",
      "a.txt": BASE,
      "b.conf": "services: {app: {privileged: true}}\n",
    },
    want: blocked("sandbox-disallow-privileged", "app"),
  },
  {
    name: "a COMPOSE_FILE naming a missing file: compose refuses to start, each file is judged alone",
    files: { "compose.yaml": BASE, ".env": "COMPOSE_FILE=compose.yaml:gone.yaml\n" },
    want: passes,
  },
]);

describe("COMPOSE_FILE in the environment (finding B2)", () => {
  it("selects the files; the environment wins over .env", async () => {
    const before = process.env.COMPOSE_FILE;
    process.env.COMPOSE_FILE = "compose.yaml:extra.conf";
    try {
      const files = {
        "compose.yaml": BASE,
        ".env": "COMPOSE_FILE=compose.yaml\n",
        "extra.conf": "services: {app: {privileged: true}}\n",
      };
      const r = await scanFiles(files);
      assertVerdict(r, blocked("sandbox-disallow-privileged", "app"));
      expect(r.report.assumptions.map((a) => a.statement).join("\n")).toContain(
        "COMPOSE_FILE from the environment",
      );
    } finally {
      if (before === undefined) delete process.env.COMPOSE_FILE;
      else process.env.COMPOSE_FILE = before;
    }
  });
});

describe("the merged project, never the override alone (finding B1's false alarm)", () => {
  it("an override that only adds a variable to the safe service passes, judged once", async () => {
    const r = await scanFiles({
      "compose.yaml": BASE,
      "compose.override.yaml": "services: {app: {environment: {LOG_LEVEL: debug}}}\n",
    });
    assertVerdict(r, passes);
    expect(r.report.resources.filter((x) => x.name === "app").map((x) => x.location.file)).toEqual([
      "compose.yaml",
    ]);
    expect(r.report.assumptions.map((a) => a.statement).join("\n")).toContain(
      "loads compose.yaml and then compose.override.yaml",
    );
  });

  it("scanning the override alone judges the merged project, under compose.yaml", async () => {
    const files = { "compose.yaml": BASE, "compose.override.yaml": "services: {app: {privileged: true}}\n" };
    const r = await scanFiles(files, [], ["compose.override.yaml"]);
    assertVerdict(r, blocked("sandbox-disallow-privileged", "app"));
    expect(r.report.findings.every((f) => f.resource.id.startsWith("compose.yaml:"))).toBe(true);
    assertVerdict(
      await scanFiles(
        { ...files, "compose.override.yaml": "services: {app: {labels: [a=b]}}\n" },
        [],
        ["compose.override.yaml"],
      ),
      passes,
    );
  });

  it("a file compose does not load by default is still judged alone (as with -f)", async () => {
    assertVerdict(
      await scanFiles({ "compose.yaml": BASE, "compose.prod.yaml": compose("web", "privileged: true") }),
      blocked("sandbox-disallow-privileged", "web"),
    );
  });

  it("COMPOSE_PROFILES is stated; every profile's services are judged", async () => {
    const r = await scanFiles({
      "compose.yaml": `${BASE}  dbg:\n    profiles: [debug]\n    image: busybox\n    privileged: true\n`,
      ".env": "COMPOSE_PROFILES=web\n",
      "compose.override.yaml": "services: {app: {labels: [a=b]}}\n",
    });
    assertVerdict(r, blocked("sandbox-disallow-privileged", "dbg"));
    expect(r.report.assumptions.map((a) => a.statement).join("\n")).toContain(
      'COMPOSE_PROFILES from .env selects the profiles "web"',
    );
  });
});

cases("a file with only include: is a Compose file (finding B3)", [
  {
    name: "include: only, the included file has another extension",
    files: {
      "compose.yml": "include:\n  - parts/app.inc\n",
      "parts/app.inc": "services:\n  app:\n    image: busybox\n    privileged: true\n",
    },
    want: blocked("sandbox-disallow-privileged", "app"),
  },
  {
    name: "include: in long form with services: null, in a file of another name",
    files: {
      "stack.yaml": "services:\ninclude:\n  - path: [parts/app.inc]\n",
      "parts/app.inc": "services: {app: {image: busybox, privileged: true}}\n",
    },
    want: blocked("sandbox-disallow-privileged", "app"),
  },
  {
    name: "a GitLab CI file with include: and jobs is not a Compose file (no false denial)",
    files: { "ci.yaml": "include:\n  - local: templates/x.yml\nbuild:\n  script: [make]\n" },
    want: passes,
  },
]);
