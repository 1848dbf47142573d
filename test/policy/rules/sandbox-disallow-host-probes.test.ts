/**
 * sandbox-disallow-host-probes: no probe or lifecycle handler names a `host`. The kubelet runs `httpGet` and
 * `tcpSocket` handlers from the node's own network, so a host makes the node connect wherever the manifest says
 * (the metadata service, the API server), past the pod's NetworkPolicy. As Pod Security baseline's
 * `hostProbesAndHostLifecycle`, any non-empty host is refused, untrimmed, in every container list. Docker has no
 * such handler (a healthcheck runs inside the container).
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-host-probes";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job", "Sandbox"] as const;
const HANDLERS = [
  "livenessProbe",
  "readinessProbe",
  "startupProbe",
  "lifecycle.postStart",
  "lifecycle.preStop",
];

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
/** A container with `handler` written at `where` (`livenessProbe`, `lifecycle.preStop`). */
function withHandler(c: Obj, where: string, handler: unknown): Obj {
  const [head = "", tail] = where.split(".");
  if (tail === undefined) return { ...c, [head]: handler };
  return { ...c, [head]: { ...((c[head] as Obj | undefined) ?? {}), [tail]: handler } };
}
function pod(
  kind: string,
  where: string,
  handler: unknown,
  role: "containers" | "initContainers" = "containers",
) {
  const spec = safePodSpec();
  const c = withHandler(safeK8sContainer(role === "containers" ? "task" : "side"), where, handler);
  if (role === "containers") spec.containers = [c];
  else spec.initContainers = [{ ...c, restartPolicy: "Always" }];
  return validate(carrier(kind).type, carrier(kind).build(spec));
}
const said = (host: string) =>
  `has a probe or lifecycle handler with host ${JSON.stringify(host)}: the kubelet connects to it from the node's network, outside the pod's network policy`;

async function scanned(files: Record<string, string>, name: string) {
  const dir = tempFiles(files);
  const { report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return {
    rules: rulesOf(report, name),
    messages: violationsOf(report, name).filter((m) => m.startsWith(RULE)),
  };
}
const manifest = (where: string, handler: unknown) =>
  JSON.stringify({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "task" },
    spec: {
      backoffLimit: 0,
      template: { spec: { ...safePodSpec(), containers: [withHandler(safeK8sContainer(), where, handler)] } },
    },
  });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it.each(HANDLERS.flatMap((h) => ["httpGet", "tcpSocket"].map((k) => [h, k] as const)))(
    "refuses a %s %s handler with a host, naming where",
    (where, kind) => {
      expect(mine(pod("Pod", where, { [kind]: { host: "169.254.169.254", port: 80 } }))).toEqual([
        `container "task" ${said("169.254.169.254")} [spec.containers[0].${where}.${kind}.host]`,
      ]);
    },
  );

  it.each(KINDS)("refuses a host probe in a %s, at the carrier's own path", (kind) => {
    const at = carrier(kind).specPath.join(".");
    expect(mine(pod(kind, "readinessProbe", { tcpSocket: { host: "10.96.0.1", port: 443 } }))).toEqual([
      `container "task" ${said("10.96.0.1")} [${at}.containers[0].readinessProbe.tcpSocket.host]`,
    ]);
  });

  it("refuses a host on a sidecar's probe, localhost and a host of one space (Pod Security does not trim)", () => {
    expect(
      mine(
        pod("Pod", "startupProbe", { httpGet: { host: "kubernetes.default", port: 443 } }, "initContainers"),
      ),
    ).toEqual([
      `init container "side" ${said("kubernetes.default")} [spec.initContainers[0].startupProbe.httpGet.host]`,
    ]);
    expect(
      mine(pod("Deployment", "livenessProbe", { httpGet: { host: "localhost", port: 8080 } })),
    ).toHaveLength(1);
    expect(mine(pod("Job", "lifecycle.preStop", { httpGet: { host: " ", port: 8080 } }))).toEqual([
      expect.stringContaining(said(" ")),
    ]);
  });

  it("reports each handler that names a host", () => {
    const c = withHandler(
      withHandler(safeK8sContainer(), "livenessProbe", { httpGet: { host: "a.example", port: 80 } }),
      "lifecycle.postStart",
      { tcpSocket: { host: "b.example", port: 22 } },
    );
    const spec = { ...safePodSpec(), containers: [c] };
    expect(mine(validate(carrier("Pod").type, carrier("Pod").build(spec)))).toEqual([
      expect.stringContaining(said("a.example")),
      expect.stringContaining(said("b.example")),
    ]);
  });

  it.each([
    [
      "an httpGet liveness probe",
      "livenessProbe",
      { httpGet: { host: "169.254.169.254", path: "/latest/meta-data", port: 80 } },
    ],
    ["a tcpSocket readiness probe", "readinessProbe", { tcpSocket: { host: "10.0.0.1", port: 6443 } }],
    ["an httpGet postStart hook", "lifecycle.postStart", { httpGet: { host: "internal.example", port: 80 } }],
  ])("scan refuses a Kubernetes Job manifest with %s naming a host", async (_, where, handler) => {
    const { messages } = await scanned({ "job.yaml": manifest(where, handler) }, "task");
    expect(messages).toEqual([expect.stringContaining(`[spec.template.spec.containers[0].${where}.`)]);
  });

  it.each([
    ["no host", { httpGet: { path: "/healthz", port: 8080 } }],
    ["an empty host", { httpGet: { host: "", path: "/healthz", port: 8080 } }],
    [
      "a Host header (sent to the pod's own address)",
      { httpGet: { port: 80, httpHeaders: [{ name: "Host", value: "a.example" }] } },
    ],
    ["a tcpSocket without host", { tcpSocket: { port: 5432 } }],
    ["a gRPC probe", { grpc: { port: 9000 } }],
    ["an exec probe", { exec: { command: ["sh", "-c", "test -f /tmp/ready"] } }],
  ])("passes a handler with %s", (_, handler) => {
    for (const where of HANDLERS)
      for (const kind of KINDS)
        expect(violated(pod(kind, where, handler)), `${kind} ${where}`).not.toContain(RULE);
  });

  it("passes a docker.Container healthcheck (it runs inside the container) and scan passes a probe without host", async () => {
    const hc = { tests: ["CMD", "wget", "-q", "http://169.254.169.254/"], interval: "5s" };
    expect(violated(validate(DOCKER, { ...safeContainer(), healthcheck: hc }))).not.toContain(RULE);
    const files = { "job.yaml": manifest("livenessProbe", { httpGet: { path: "/", port: 80 } }) };
    expect((await scanned(files, "task")).rules).not.toContain(RULE);
  });

  it("notes, without refusing, a host, handler or handler kind not known until the update", () => {
    for (const o of [
      pod("Pod", "livenessProbe", { httpGet: { host: UNKNOWN_WIRE, port: 80 } }),
      pod("Deployment", "readinessProbe", UNKNOWN_WIRE),
      pod("Job", "lifecycle.preStop", { tcpSocket: UNKNOWN_WIRE }),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses a known host beside a handler not known yet", () => {
    const c = withHandler(
      withHandler(safeK8sContainer(), "livenessProbe", { httpGet: { host: "a.example", port: 80 } }),
      "readinessProbe",
      UNKNOWN_WIRE,
    );
    const o = validate(carrier("Pod").type, carrier("Pod").build({ ...safePodSpec(), containers: [c] }));
    expect(mine(o)).toEqual([expect.stringContaining(said("a.example"))]);
  });
});
