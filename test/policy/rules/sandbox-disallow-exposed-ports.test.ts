/**
 * sandbox-disallow-exposed-ports (mission): a task is reachable from nowhere. Docker `ports` (every entry publishes,
 * a random host port when none is named), `publishAllPorts`, host networking and macvlan/ipvlan networks; Kubernetes
 * `hostPort` > 0 and `hostNetwork`; Services of type NodePort or LoadBalancer or with externalIPs; every Ingress and
 * Gateway API entry point. A port the container only declares (`containerPort`, Compose `expose`) opens nothing.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import {
  carrier,
  DOCKER,
  SERVICE,
  safeContainer,
  safeK8sContainer,
  safePodSpec,
  safeService,
} from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-exposed-ports";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
const INGRESS = "kubernetes:networking.k8s.io/v1:Ingress";
const GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway";

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: Obj) => validate(DOCKER, { ...safeContainer(), ...props });
/** A hardened pod with `fields` on its spec and `ports` on its container (or an init container). */
function pod(kind: string, fields: Obj, ports?: Obj[], role: "containers" | "initContainers" = "containers") {
  const spec = { ...safePodSpec(), ...fields };
  const c = safeK8sContainer(role === "containers" ? "task" : "init");
  if (ports !== undefined) c.ports = ports;
  if (role === "containers") spec.containers = [c];
  else spec.initContainers = [c];
  return validate(carrier(kind).type, carrier(kind).build(spec));
}
const svc = (spec: Obj) =>
  validate(SERVICE, { ...safeService(), spec: { ...(safeService().spec as Obj), ...spec } }, { name: "web" });

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
const compose = (...lines: string[]) =>
  [
    "services:",
    "  app:",
    ...["image: sandbox-busybox:1", 'user: "1000:1000"', "read_only: true", ...lines].map((l) => `    ${l}`),
    "",
  ].join("\n");
const body = (hc: Obj, top: Obj = {}) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    ...top,
    HostConfig: { ReadonlyRootfs: true, CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges"], ...hc },
  });
const yaml = (...docs: Obj[]) => docs.map((d) => JSON.stringify(d)).join("\n---\n");
const deployment = (fields: Obj, ports?: Obj[]) => {
  const c = safeK8sContainer();
  if (ports !== undefined) c.ports = ports;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "task" },
    spec: {
      selector: { matchLabels: { a: "b" } },
      template: { metadata: { labels: { a: "b" } }, spec: { ...safePodSpec(), ...fields, containers: [c] } },
    },
  };
};
const service = (spec: Obj) => ({ apiVersion: "v1", kind: "Service", metadata: { name: "web" }, spec });

describe(RULE, () => {
  it("passes the hardened docker.Container, the hardened pods and a ClusterIP Service", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
    expect(violated(validate(SERVICE, safeService()))).not.toContain(RULE);
  });

  it.each([
    [
      { ports: [{ internal: 80, external: 8080 }] },
      `"fixture" publishes port 80 on host port 8080 [ports[0]]`,
    ],
    [{ ports: [{ internal: 80 }] }, `"fixture" publishes port 80 on a random host port [ports[0]]`],
    [{ ports: [{ internal: 80, external: 8080, ip: "::1" }] }, "port 80 on host port 8080 on ::1 [ports[0]]"],
    [{ publishAllPorts: true }, "publishAllPorts publishes every exposed port of the image on the host"],
    [
      { networkMode: "host" },
      "uses the host's network (networkMode host): every port it opens is on the host",
    ],
  ])("refuses docker.Container %j", (props, message) => {
    expect(mine(docker(props))).toEqual([expect.stringContaining(message)]);
  });

  it.each(KINDS)("refuses a %s with a hostPort (init too) or hostNetwork", (kind) => {
    const at = carrier(kind).specPath.join(".");
    expect(mine(pod(kind, {}, [{ containerPort: 80, hostPort: 8080 }]))).toEqual([
      `container "task" publishes port 80 on host port 8080 [${at}.containers[0].ports[0]]`,
    ]);
    expect(
      mine(pod(kind, {}, [{ containerPort: 53, hostPort: 53, hostIP: "0.0.0.0" }], "initContainers")),
    ).toEqual([
      `init container "init" publishes port 53 on host port 53 on 0.0.0.0 [${at}.initContainers[0].ports[0]]`,
    ]);
    expect(mine(pod(kind, { hostNetwork: true }))).toEqual([
      `the workload uses the host's network (hostNetwork: true): every port it opens is on the host [${at}.hostNetwork]`,
    ]);
  });

  it.each(["NodePort", "LoadBalancer"])(
    "refuses a Service of type %s, and any Service with externalIPs",
    (type) => {
      expect(mine(svc({ type }))).toEqual([
        `Service "web" has type ${type}, which opens a port outside the cluster [spec.type]`,
      ]);
      expect(mine(svc({ externalIPs: ["203.0.113.7"] }))).toEqual([
        `Service "web" sets externalIPs [203.0.113.7] [spec.externalIPs]`,
      ]);
    },
  );

  it("refuses every Ingress and Gateway API entry point", () => {
    const ing = validate(
      INGRESS,
      { metadata: { name: "web" }, spec: { rules: [{ host: "a.example" }] } },
      { name: "web" },
    );
    expect(mine(ing)).toEqual([`Ingress "web" lets traffic in from outside the cluster (a.example)`]);
    const gw = validate(GATEWAY, {
      metadata: { name: "gw" },
      spec: { gatewayClassName: "x", listeners: [{ name: "h", port: 80, protocol: "HTTP" }] },
    });
    expect(violated(gw)).toContain(RULE);
  });

  it.each([
    ["ports 8080:80", compose('ports: ["8080:80"]'), /publishes port 80 on host port 8080 \[ports\[0\]\]/],
    ["a port with no host side", compose('ports: ["80"]'), /publishes port 80 on a random host port/],
    [
      "a long-syntax port",
      compose('ports: [{ target: 80, published: "8080", host_ip: 127.0.0.1 }]'),
      /port 80 on host port 8080 on 127\.0\.0\.1/,
    ],
    ["network_mode: host", compose("network_mode: host"), /uses the host's network/],
    [
      "a macvlan network",
      [compose("networks: [lan]").trimEnd(), "networks:", "  lan:", "    driver: macvlan", ""].join("\n"),
      /on macvlan network "lan": it gets an address of its own on the host's network/,
    ],
  ])("scan refuses a Compose service with %s", async (_, text, re) => {
    expect((await scanned({ "compose.yaml": text }, "app")).messages).toEqual([expect.stringMatching(re)]);
  });

  it.each([
    ["PortBindings", body({ PortBindings: { "80/tcp": [{ HostPort: "8080" }] } }), /on host port 8080/],
    ["PublishAllPorts", body({ PublishAllPorts: true }, { ExposedPorts: { "80/tcp": {} } }), /publishAll/],
    ["NetworkMode host", body({ NetworkMode: "host" }), /uses the host's network/],
  ])("scan refuses an Engine API body with %s", async (_, text, re) => {
    expect((await scanned({ "body.json": text }, "container#1")).messages).toEqual([
      expect.stringMatching(re),
    ]);
  });

  it("scan refuses Kubernetes manifests: a hostPort, a NodePort Service, an Ingress", async () => {
    expect(
      (await scanned({ "d.yaml": yaml(deployment({}, [{ containerPort: 80, hostPort: 80 }])) }, "task"))
        .messages,
    ).toEqual([
      expect.stringMatching(/publishes port 80 on host port 80 \[spec\.template\.spec\.containers\[0\]/),
    ]);
    const s = service({ type: "NodePort", selector: { a: "b" }, ports: [{ port: 80 }] });
    expect((await scanned({ "s.yaml": yaml(s) }, "web")).messages).toEqual([
      expect.stringMatching(/type NodePort/),
    ]);
    const ing = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "web" }, spec: {} };
    expect((await scanned({ "i.yaml": yaml(ing) }, "web")).rules).toContain(RULE);
  });

  it("passes ports a container only declares, a hostPort of 0 and empty port lists", () => {
    expect(violated(docker({ ports: [] }))).not.toContain(RULE);
    expect(violated(docker({ publishAllPorts: false, networkMode: "bridge" }))).not.toContain(RULE);
    for (const kind of KINDS) {
      expect(violated(pod(kind, {}, [{ containerPort: 8080, name: "http" }])), kind).not.toContain(RULE);
      expect(
        violated(pod(kind, { hostNetwork: false }, [{ containerPort: 80, hostPort: 0 }])),
        kind,
      ).not.toContain(RULE);
    }
  });

  it.each([
    ["ClusterIP", { type: "ClusterIP" }],
    ["headless", { clusterIP: "None" }],
    ["ExternalName", { type: "ExternalName", externalName: "db.example", selector: undefined }],
    ["empty externalIPs", { externalIPs: [] }],
    ["no type (ClusterIP)", { type: undefined }],
  ])("passes a %s Service", (_, spec) => {
    expect(violated(svc(spec))).not.toContain(RULE);
  });

  it.each([
    ["Compose expose (not published)", { "compose.yaml": compose('expose: ["80"]') }, "app"],
    ["Compose network_mode: none", { "compose.yaml": compose("network_mode: none") }, "app"],
    [
      "an Engine port with no bindings",
      { "b.json": body({ PortBindings: { "80/tcp": [] } }) },
      "container#1",
    ],
    ["Engine ExposedPorts alone", { "b.json": body({}, { ExposedPorts: { "80/tcp": {} } }) }, "container#1"],
    ["a Kubernetes containerPort", { "d.yaml": yaml(deployment({}, [{ containerPort: 80 }])) }, "task"],
    ["a ClusterIP Service", { "s.yaml": yaml(service({ ports: [{ port: 80 }] })) }, "web"],
  ])("scan passes %s", async (_, files, name) => {
    expect((await scanned(files, name)).rules).not.toContain(RULE);
  });

  it("notes, without refusing, ports, networks and Service types not known until the update", () => {
    for (const o of [
      docker({ ports: UNKNOWN_WIRE }),
      docker({ networkMode: UNKNOWN_WIRE }),
      docker({ publishAllPorts: UNKNOWN_WIRE }),
      pod("Pod", {}, [{ containerPort: 80, hostPort: UNKNOWN_WIRE }]),
      pod("Deployment", { hostNetwork: UNKNOWN_WIRE }),
      svc({ type: UNKNOWN_WIRE }),
      svc({ externalIPs: UNKNOWN_WIRE }),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses a known published port beside values not known yet", () => {
    expect(mine(docker({ networkMode: UNKNOWN_WIRE, ports: [{ internal: 22, external: 2222 }] }))).toEqual([
      `container "fixture" publishes port 22 on host port 2222 [ports[0]]`,
    ]);
    expect(mine(svc({ type: "LoadBalancer", externalIPs: UNKNOWN_WIRE }))).toEqual([
      expect.stringMatching(/type LoadBalancer/),
    ]);
  });
});
