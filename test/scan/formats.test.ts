// Every input format `scan` reads, each with a valid and a broken example: Kubernetes YAML (multi-document, List,
// folder, standard input), Compose, `pulumi preview --json`, `pulumi stack export`, the runtime's launch spec and an
// Engine API create body. Unknown kinds are skipped, never a crash; a file that does not parse names file and line.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadStack } from "../../cli/main";
import { launchSpec } from "../../components/model";
import { BROKEN_JSON } from "./broken-json";
import { DECLARED_ARGS, FIXTURES, ROOT, rulesOf, scanJson, tempFiles, violationsOf } from "./helpers";

const K8S = `${FIXTURES}/kubernetes`;

describe("Kubernetes YAML", () => {
  it("reads a multi-document file: judges the Job, skips what no rule judges, passes", async () => {
    const { code, report } = await scanJson([`${K8S}/task-job.yaml`]);
    expect(report.errors).toEqual([]);
    expect(report.resources.map((r) => `${r.kind}/${r.name}`)).toEqual(["Job/task-1"]);
    expect(report.resources[0]?.type).toBe("kubernetes:batch/v1:Job");
    expect(report.resources[0]?.location).toEqual({ file: `${K8S}/task-job.yaml`, line: 7 });
    expect(report.findings).toEqual([]);
    expect(report.skipped.map((s) => `${s.kind}/${s.name} line ${s.location.line}`)).toEqual([
      "Namespace/sandbox-demo line 2",
      "ConfigMap/task-settings line 64",
    ]);
    expect(code).toBe(0);
  });

  it("points each finding at the line of the field it is about", async () => {
    const { code, report } = await scanJson([`${K8S}/agent-deploy.yaml`]);
    expect(code).toBe(1);
    const at = (rule: string) => report.findings.find((f) => f.ruleId === rule)?.location;
    expect(at("sandbox-disallow-host-namespaces")).toEqual({ file: `${K8S}/agent-deploy.yaml`, line: 14 });
    expect(at("sandbox-disallow-secret-env")?.line).toBe(19);
    expect(at("sandbox-disallow-runtime-socket")?.line).toBe(29);
    // The Service in the same file is a second resource, judged by the exposure rule.
    expect(violationsOf(report, "agent").filter((v) => v.includes("NodePort"))).toHaveLength(1);
    const svc = report.findings.find((f) => f.resource.kind === "Service");
    expect(svc?.location.line).toBe(39);
  });

  it("unrolls List kinds", async () => {
    const { code, report } = await scanJson([`${K8S}/pods-list.yaml`]);
    expect(code).toBe(1);
    expect(report.resources.map((r) => `${r.kind}/${r.name}:${r.location.line}`)).toEqual(["Pod/debug:5"]);
    expect(rulesOf(report, "debug")).toContain("sandbox-require-non-root");
    expect(report.skipped).toMatchObject([{ kind: "Secret", name: "not-judged", location: { line: 15 } }]);
  });

  it("reads a folder recursively, in a stable order", async () => {
    const { report } = await scanJson([K8S]);
    expect(report.inputs).toEqual([
      `${K8S}/agent-deploy.yaml`,
      `${K8S}/pods-list.yaml`,
      `${K8S}/task-job.yaml`,
    ]);
    expect(report.resources.map((r) => r.name)).toEqual(["agent", "agent", "debug", "task-1"]);
  });

  it("reads standard input (helm template output) under the name given", async () => {
    const rendered = [
      "---",
      "# Source: agent/templates/serviceaccount.yaml",
      "apiVersion: v1",
      "kind: ServiceAccount",
      "metadata:",
      "  name: agent",
      "---",
      "# Source: agent/templates/pod.yaml",
      "apiVersion: v1",
      "kind: Pod",
      "metadata:",
      "  name: agent",
      "spec:",
      "  hostPID: true",
      "  containers:",
      "    - name: agent",
      "      image: agent:1",
      "",
    ].join("\n");
    const { code, report } = await scanJson(["-", "--stdin-name", "chart/rendered.yaml"], rendered);
    expect(code).toBe(1);
    expect(report.inputs).toEqual(["chart/rendered.yaml"]);
    const hostPid = report.findings.find((f) => f.ruleId === "sandbox-disallow-host-namespaces");
    expect(hostPid?.location).toEqual({ file: "chart/rendered.yaml", line: 14 });
    expect(report.skipped).toMatchObject([{ kind: "ServiceAccount", location: { line: 3 } }]);
  });

  it("a broken file is an error naming the file and line (exit 2), and the other files are still judged", async () => {
    const { code, report } = await scanJson([`${FIXTURES}/broken/bad-indent.yaml`, `${K8S}/task-job.yaml`]);
    expect(code).toBe(2);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]?.location).toEqual({ file: `${FIXTURES}/broken/bad-indent.yaml`, line: 9 });
    expect(report.errors[0]?.message).toMatch(/^not valid YAML: /);
    expect(report.resources.map((r) => r.name)).toEqual(["task-1"]);
  });

  it("a kind with no verdict fails closed; scalars and documents without apiVersion are skipped, never a crash", async () => {
    const dir = tempFiles({
      "odd.yaml": [
        "apiVersion: example.com/v1",
        "kind: Widget",
        "metadata: { name: w }",
        "---",
        "just a string",
        "---",
        "kind: Pod",
        "metadata: { name: nover }",
        "---",
        "name: not-a-resource",
        "---",
        "",
      ].join("\n"),
    });
    const { code, report } = await scanJson([join(dir, "odd.yaml")]);
    // The Widget's kind has no verdict: it fails closed, named; the rest is skipped for what it is.
    expect(code).toBe(1);
    expect(report.errors).toEqual([]);
    expect(report.findings.map((f) => [f.ruleId, f.resource.kind])).toEqual([
      ["sandbox-disallow-unjudged-workloads", "Widget"],
    ]);
    expect(report.skipped.map((s) => s.kind)).toEqual(["string", "Pod", "unknown"]);
    expect(report.skipped[1]?.reason).toBe("no apiVersion");
    // Named, the kind is accepted and reported as exempted.
    const allowed = await scanJson([join(dir, "odd.yaml"), "--allow-unjudged", "Widget"]);
    expect(allowed.code).toBe(0);
  });

  it("a missing path is bad input", async () => {
    const { code, report } = await scanJson(["no/such/folder"]);
    expect(code).toBe(2);
    expect(report.errors).toEqual([
      { location: { file: "no/such/folder" }, message: "no such file or folder" },
    ]);
  });
});

describe("Compose", () => {
  const file = `${FIXTURES}/compose/compose.yaml`;

  it("judges each service as a Docker container: the hardened one passes, the other fails where it is written", async () => {
    const { code, report } = await scanJson([file, ...DECLARED_ARGS]);
    expect(code).toBe(1);
    expect(report.resources.map((r) => `${r.id}@${r.location.line}`)).toEqual([
      `${file}:service/task@3`,
      `${file}:service/agent@30`,
    ]);
    expect(violationsOf(report, "task")).toEqual([]);
    expect(rulesOf(report, "agent")).toEqual([
      "sandbox-disallow-added-capabilities",
      "sandbox-disallow-exposed-ports",
      "sandbox-disallow-host-namespaces",
      "sandbox-disallow-privilege-escalation",
      "sandbox-disallow-privileged",
      "sandbox-disallow-runtime-socket",
      "sandbox-disallow-secret-env",
      "sandbox-require-drop-all",
      "sandbox-require-drop-net-admin",
      "sandbox-require-no-restart",
      "sandbox-require-non-root",
      "sandbox-require-readonly-rootfs",
      "sandbox-require-single-job-mount",
    ]);
    const line = (rule: string) =>
      report.findings.find((f) => f.ruleId === rule && f.resource.name === "agent")?.location.line;
    expect(line("sandbox-disallow-exposed-ports")).toBe(33); // ports
    expect(line("sandbox-disallow-runtime-socket")).toBe(35); // volumes
    expect(line("sandbox-disallow-secret-env")).toBe(38); // environment
    expect(line("sandbox-disallow-host-namespaces")).toBe(41); // pid
    expect(line("sandbox-require-no-restart")).toBe(43); // deploy (restart_policy)
  });

  it("maps every Compose spelling onto the Docker view", async () => {
    const cases: [string, string][] = [
      ["ports: [{ target: 80, published: 8080 }]", "sandbox-disallow-exposed-ports"],
      ['ports: ["80"]', "sandbox-disallow-exposed-ports"],
      ["network_mode: host", "sandbox-disallow-host-namespaces"],
      ['ipc: "container:other"', "sandbox-disallow-host-namespaces"],
      ["userns_mode: host", "sandbox-disallow-host-namespaces"],
      ["privileged: true", "sandbox-disallow-privileged"],
      ["cap_add: [NET_RAW]", "sandbox-disallow-added-capabilities"],
      ["security_opt: [seccomp=unconfined]", "sandbox-disallow-unconfined-seccomp"],
      ["security_opt: [apparmor:unconfined]", "sandbox-disallow-unconfined-lsm"],
      ["security_opt: [systempaths=unconfined]", "sandbox-disallow-unmasked-proc"],
      ['user: "0:0"', "sandbox-require-non-root"],
      ["read_only: false", "sandbox-require-readonly-rootfs"],
      [
        "volumes: [{ type: bind, source: /etc, target: /host-etc, read_only: true }]",
        "sandbox-disallow-sensitive-host-mounts",
      ],
      ["volumes: [/run/containerd/containerd.sock:/c.sock:ro]", "sandbox-disallow-runtime-socket"],
      ["volumes: [/srv/a:/a:rshared]", "sandbox-require-single-job-mount"],
      ["environment: [DB_PASSWORD=hunter2]", "sandbox-disallow-secret-env"],
      [
        "environment: { GITHUB_TOKEN: ghp_0123456789abcdefghijklmnopqrstuvwxyzAB }",
        "sandbox-disallow-secret-env",
      ],
      ["devices: [/dev/kvm:/dev/kvm]", "sandbox-disallow-devices"],
      ["gpus: all", "sandbox-disallow-devices"],
      ["sysctls: { net.ipv4.ip_forward: 1 }", "sandbox-disallow-sysctls"],
      ["sysctls: [net.core.somaxconn=1024]", "sandbox-disallow-sysctls"],
      ["restart: unless-stopped", "sandbox-require-no-restart"],
      ["group_add: [docker]", "sandbox-require-non-root"],
      ["cap_drop: [NET_RAW]", "sandbox-require-drop-net-admin"],
    ];
    const base = [
      "image: sandbox-busybox:1",
      'user: "1000:1000"',
      "read_only: true",
      "cap_drop: [ALL]",
      'security_opt: ["no-new-privileges:true"]',
      "network_mode: none",
      "mem_limit: 512m",
      "cpus: 1",
    ];
    const services = cases.map(([line], i) => {
      const key = line.slice(0, line.indexOf(":"));
      const kept = base.filter((b) => !b.startsWith(`${key}:`));
      return [`  s${i}:`, ...[...kept, line].map((l) => `    ${l}`)].join("\n");
    });
    const dir = tempFiles({
      "compose.yaml": `services:\n  clean:\n${base.map((l) => `    ${l}`).join("\n")}\n${services.join("\n")}\n`,
    });
    const { report } = await scanJson([join(dir, "compose.yaml")]);
    expect(violationsOf(report, "clean")).toEqual([]);
    cases.forEach(([line, rule], i) => {
      expect(rulesOf(report, `s${i}`), line).toContain(rule);
    });
  });

  it("reads limits from deploy.resources and memory units", async () => {
    const dir = tempFiles({
      "compose.yaml": [
        "services:",
        "  a:",
        "    image: x",
        '    user: "1000"',
        "    cap_drop: [ALL]",
        "    security_opt: [no-new-privileges]",
        "    deploy: { resources: { limits: { cpus: '0.5', memory: 50M } } }",
        "  b:",
        "    image: x",
        '    user: "1000"',
        "    cap_drop: [ALL]",
        "    security_opt: [no-new-privileges]",
        "",
      ].join("\n"),
    });
    const { report } = await scanJson([join(dir, "compose.yaml")]);
    expect(rulesOf(report, "a")).not.toContain("sandbox-require-resource-limits");
    expect(
      violationsOf(report, "b").filter((v) => v.startsWith("sandbox-require-resource-limits")),
    ).toHaveLength(2);
  });

  it("a broken Compose file names its line", async () => {
    const { code, report } = await scanJson([`${FIXTURES}/broken/bad-compose.yaml`]);
    expect(code).toBe(2);
    expect(report.errors[0]?.location).toEqual({ file: `${FIXTURES}/broken/bad-compose.yaml`, line: 5 });
  });
});

describe("Pulumi JSON", () => {
  it("reads `pulumi preview --json`: new states, URN locations, unknowns as notes, secrets as Pulumi secrets", async () => {
    const file = `${FIXTURES}/pulumi/preview.json`;
    const { code, report } = await scanJson([file, ...DECLARED_ARGS]);
    expect(code).toBe(1);
    // The stack, the provider and the network are not judged and not listed; the delete is not judged.
    expect(report.resources.map((r) => r.name)).toEqual(["task", "loose", "debug"]);
    expect(report.skipped).toEqual([]);
    expect(violationsOf(report, "task")).toEqual([]);
    const loose = report.findings.filter((f) => f.resource.name === "loose");
    expect(
      loose.every(
        (f) => f.location.urn === "urn:pulumi:dev::sandbox::docker:index/container:Container::loose",
      ),
    ).toBe(true);
    expect(loose.every((f) => f.location.file === file && f.location.line === undefined)).toBe(true);
    expect(loose.filter((f) => f.unchecked).map((f) => f.ruleId)).toEqual([
      "sandbox-require-non-root",
      "sandbox-require-non-root",
    ]);
    const rules = loose.filter((f) => !f.unchecked).map((f) => f.ruleId);
    expect(rules).toContain("sandbox-disallow-secret-env");
    expect(rules).toContain("sandbox-disallow-secret-flow"); // the stack rule, over the preview's resources
    expect(JSON.stringify(report)).not.toContain("ghp_");
  });

  it("reads `pulumi stack export`: inputs, with encrypted and shown secrets", async () => {
    const { code, report } = await scanJson([`${FIXTURES}/pulumi/stack-export.json`, ...DECLARED_ARGS]);
    expect(code).toBe(1);
    expect(report.resources.map((r) => r.name)).toEqual(["task", "with-secret", "shown-secret", "debug"]);
    expect(violationsOf(report, "task")).toEqual([]);
    expect(violationsOf(report, "shown-secret")).toContain(
      'sandbox-disallow-secret-env: container "shown-secret" gets variable API_TOKEN from a Pulumi secret (the value is not shown) [envs[1]]',
    );
    expect(rulesOf(report, "with-secret")).toEqual([
      "sandbox-disallow-secret-env",
      "sandbox-disallow-secret-flow",
    ]);
    expect(JSON.stringify(report)).not.toContain("ghp_0123");
  });

  it.each([
    ["bad-preview.json", 4],
    ["bad-export.json", 5],
  ])("a broken %s names its line", async (name, line) => {
    const dir = tempFiles(BROKEN_JSON);
    const { code, report } = await scanJson([name], undefined, dir);
    expect(code).toBe(2);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]?.location).toEqual({ file: name, line });
    expect(report.errors[0]?.message).toMatch(/^not valid JSON: /);
  });
});

describe("the runtime's launch spec and Engine API create bodies", () => {
  it("judges the dev stack's launch spec exactly as the launcher would send it, and it passes", async () => {
    const project = loadStack(ROOT, "dev");
    const dir = tempFiles({});
    for (const name of Object.keys(project.spec.templates))
      writeFileSync(
        join(dir, `${name}.json`),
        JSON.stringify(launchSpec(project, name, `${project.spec.name}-net`)),
      );
    const { code, report } = await scanJson([dir]);
    expect(report.errors).toEqual([]);
    expect(report.resources.length).toBe(Object.keys(project.spec.templates).length);
    expect(report.resources.every((r) => r.format === "launch-spec" && r.type === "launch")).toBe(true);
    expect(report.findings.filter((f) => !f.unchecked)).toEqual([]);
    expect(code).toBe(0);
  });

  it("a launch spec that cannot be built into a create body is an error, not a crash", async () => {
    const dir = tempFiles({
      "spec.json": JSON.stringify({ kind: "sandbox.launch/v1", project: "p", template: "t" }),
    });
    const { code, report } = await scanJson([join(dir, "spec.json")]);
    expect(code).toBe(2);
    expect(report.errors[0]?.message).toMatch(/^launch spec p\/t cannot be read: /);
    expect(report.errors[0]?.location.line).toBe(1);
  });

  it("judges Engine API create bodies with lines", async () => {
    const { code, report } = await scanJson([`${FIXTURES}/launch`, ...DECLARED_ARGS]);
    expect(code).toBe(1);
    expect(violationsOf(report, "demo-task-1")).toEqual([]);
    const socket = report.findings.find((f) => f.ruleId === "sandbox-disallow-runtime-socket");
    expect(socket?.resource.format).toBe("engine-create-body");
    expect(socket?.location).toEqual({ file: `${FIXTURES}/launch/engine-body-socket.json`, line: 40 });
  });

  it("a broken create body names its line", async () => {
    const { code, report } = await scanJson(["bad-body.json"], undefined, tempFiles(BROKEN_JSON));
    expect(code).toBe(2);
    expect(report.errors[0]?.location).toEqual({ file: "bad-body.json", line: 4 });
  });
});
