/**
 * The egress proxy on the real Docker engine. Nothing here leaves the machine: the "outside" server lives on an
 * `internal` network this test creates (198.18.0.0/24, RFC 2544 benchmarking space, which the proxy does not refuse),
 * the proxy's only networks are internal ones, and the refused destinations (a 10.x server, the metadata address,
 * loopback) are named through the proxy's resolver and asserted from the proxy's decision before any connection.
 */
import { randomBytes } from "node:crypto";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LABELS,
  PER_TASK_NETWORK,
  PROXY_IMAGE,
  type ProxySpec,
  proxySpec,
  proxyUnits,
  serviceUnitName,
} from "../../components/model";
import { judge } from "../../policy/rules/registry";
import { adaptLaunchSpec } from "../../policy/sources/docker/read";
import { demuxLogs } from "../../runtime/docker/client";
import { Launcher, LaunchRefused, type TaskResult } from "../../runtime/launcher";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { policyPreflight } from "../../runtime/preflight";
import { ensureProxy, proxyCreateBody } from "../../runtime/proxy";
import { runEscape, runProbe } from "../../runtime/walls";
import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";
import { internalNetwork, removeLabelled, requireImage, testServer } from "../helpers/test-servers";

const TEST_LABEL = "sandbox.test";
const OUTSIDE_SUBNET = "198.18.0.0/24";
const PRIVATE_SUBNET = "10.250.77.0/24";
const TOKEN = randomBytes(6).toString("hex");

let docker: Dockerode;
let proxy: ProxySpec;
let outsideIp = "";
const project = testProject("px", {
  web: {
    image: TEST_IMAGE,
    timeoutSeconds: 60,
    egress: {
      mode: "proxy",
      allow: ["allowed.test", "*.wild.test", "private.test", "metadata.test", "loop.test"],
    },
  },
  other: { image: TEST_IMAGE, timeoutSeconds: 60, egress: { mode: "proxy", allow: ["other.test"] } },
  // The same egress under gVisor: its own network stack, the same per-task network and proxy.
  zweb: {
    image: TEST_IMAGE,
    runtime: "runsc",
    timeoutSeconds: 60,
    egress: { mode: "proxy", allow: ["allowed.test"] },
  },
  closed: { image: TEST_IMAGE, timeoutSeconds: 30 },
});
const name = project.spec.name;
const outsideNet = `${name}-outside`;
const privateNet = `${name}-private`;
const launcher = () =>
  new Launcher(docker, {
    ledger: false,
    preflight: policyPreflight(),
    proxy: (s) => ensureProxy(docker, proxy, s.template, proxyOptions),
  });
const proxyOptions = {
  egressNetwork: outsideNet,
  // The proxy's resolver: names on the allowlist that point at refused addresses.
  extraHosts: ["metadata.test:169.254.169.254", "loop.test:127.0.0.1"],
};

/** A shell script that sends raw requests through the task's proxy at once and prints each answer. */
function requests(list: readonly { id: string; request: string }[]): string {
  return [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions
    'p="${http_proxy#http://}"; ph="${p%%:*}"; pp="${p##*:}"',
    ...list.map(
      (r) =>
        `{ printf '${r.request.replace(/\n/g, "\\r\\n")}'; sleep 2; } | nc -w 5 "$ph" "$pp" > /tmp/${r.id} 2>&1 &`,
    ),
    "wait",
    ...list.map((r) => `echo "=== ${r.id}"; cat /tmp/${r.id}; echo`),
  ].join("\n");
}

function answer(result: TaskResult, id: string): string {
  const at = result.stdout.indexOf(`=== ${id}\n`);
  if (at < 0) return "";
  const rest = result.stdout.slice(at + id.length + 5);
  const next = rest.indexOf("\n=== ");
  return next < 0 ? rest : rest.slice(0, next);
}

const labels = { [TEST_LABEL]: "proxy", [LABELS.project]: name };
/** Template web's own proxy container. */
const webProxy = () => serviceUnitName(proxy.name, "web");
const removeStale = () => removeLabelled(docker, `${TEST_LABEL}=proxy`);

beforeAll(async () => {
  docker = await requireDocker();
  await requireImage(docker, PROXY_IMAGE, "toolchain/proxy-image.sh");
  await removeStale();
  await internalNetwork(docker, outsideNet, OUTSIDE_SUBNET, labels);
  await internalNetwork(docker, privateNet, PRIVATE_SUBNET, labels);
  // The "outside": plain HTTP on 80, and on 443 for the CONNECT tunnel.
  const outside = await testServer(
    docker,
    outsideNet,
    ["allowed.test", "a.wild.test", "other.test"],
    `mkdir -p /tmp/www && echo "hello from outside ${TOKEN}" > /tmp/www/index.html && httpd -p 443 -h /tmp/www && exec httpd -f -vv -p 80 -h /tmp/www`,
    labels,
  );
  outsideIp = (await outside.inspect()).NetworkSettings.Networks[outsideNet]?.IPAddress ?? "";
  // A private server that must never see a request: the proxy refuses its address.
  await testServer(
    docker,
    privateNet,
    ["private.test"],
    "mkdir -p /tmp/www && echo private > /tmp/www/index.html && exec httpd -f -vv -p 80 -h /tmp/www",
    labels,
  );
  const spec = proxySpec(project, `${name}-net`);
  if (spec === undefined) throw new Error("no proxy");
  proxy = spec;
  // Each template's own proxy; each may also reach the private server, which it must refuse by address.
  for (const unit of proxyUnits(proxy)) {
    const template = unit.listeners[0]?.template ?? "";
    const container = await ensureProxy(docker, proxy, template, proxyOptions);
    if (container !== undefined) await docker.getNetwork(privateNet).connect({ Container: container.id });
  }
}, 60_000);

afterAll(async () => {
  if (!docker) return;
  await offSwitch(docker, name);
  await removeStale();
});

describe("the proxy container", () => {
  it("runs hardened: non-root, read-only root, every capability dropped, no-new-privileges, limits, no ports", async () => {
    const info = await docker.getContainer(webProxy()).inspect();
    expect(info.Config.User).toBe("13:13");
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.CapDrop).toEqual(["ALL"]);
    expect(info.HostConfig.SecurityOpt).toEqual(["no-new-privileges:true"]);
    expect(info.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(info.HostConfig.PidsLimit).toBe(128);
    expect(info.HostConfig.PortBindings ?? {}).toEqual({});
    expect(Object.keys(info.NetworkSettings.Networks).sort()).toEqual(
      [`${name}-net`, outsideNet, privateNet].sort(),
    );
    expect(info.Config.Labels?.[LABELS.role]).toBe("proxy");
    expect(info.Config.Labels?.[LABELS.template]).toBe("web");
  });

  it("passes every mandatory rule of the policy pack", () => {
    const body = proxyCreateBody(proxyUnits(proxy)[0] ?? proxy, outsideNet);
    const findings = judge(adaptLaunchSpec(body, `${name}/proxy`), undefined, {})
      .filter(({ rule }) => rule.enforcementLevel !== "advisory")
      .flatMap(({ rule, findings }) => findings.map((f) => `${rule.id}: ${f.message}`));
    expect(findings).toEqual([]);
  });
});

describe("a proxy-mode task", () => {
  let result: TaskResult;
  beforeAll(async () => {
    result = await launcher().run(specOf(project, "web"), {
      command: [
        "sh",
        "-c",
        requests([
          { id: "allowed", request: "GET http://allowed.test/ HTTP/1.0\nHost: allowed.test\n\n" },
          { id: "wild", request: "GET http://a.wild.test/ HTTP/1.0\nHost: a.wild.test\n\n" },
          {
            id: "tunnel",
            request: "CONNECT allowed.test:443 HTTP/1.0\n\nGET / HTTP/1.0\nHost: allowed.test\n\n",
          },
          { id: "unlisted", request: "GET http://evil.test/ HTTP/1.0\nHost: evil.test\n\n" },
          { id: "otherTemplate", request: "GET http://other.test/ HTTP/1.0\nHost: other.test\n\n" },
          { id: "connect80", request: "CONNECT allowed.test:80 HTTP/1.0\n\n" },
          { id: "port8080", request: "GET http://allowed.test:8080/ HTTP/1.0\nHost: allowed.test\n\n" },
          { id: "literal", request: `GET http://${outsideIp}/ HTTP/1.0\nHost: ${outsideIp}\n\n` },
          { id: "private", request: "GET http://private.test/ HTTP/1.0\nHost: private.test\n\n" },
          { id: "metadata", request: "GET http://metadata.test/latest/ HTTP/1.0\nHost: metadata.test\n\n" },
          { id: "loop", request: "CONNECT loop.test:443 HTTP/1.0\n\n" },
        ]),
      ],
      removeJobDir: true,
    });
  }, 60_000);

  it("gets the allowed host's real body through the proxy (plain HTTP, a *.suffix name, and a CONNECT tunnel to 443)", () => {
    expect(answer(result, "allowed")).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer(result, "allowed")).toContain(`hello from outside ${TOKEN}`);
    expect(answer(result, "wild")).toContain(`hello from outside ${TOKEN}`);
    expect(answer(result, "tunnel")).toMatch(/^HTTP\/1\.1 200 Connection established/);
    expect(answer(result, "tunnel")).toContain(`hello from outside ${TOKEN}`);
    const allowed = result.egress?.decisions.filter((d) => d.decision === "allowed") ?? [];
    expect(allowed.map((d) => `${d.method} ${d.host}:${d.port} ${d.status} ${d.server}`).sort()).toEqual(
      [
        `CONNECT allowed.test:443 200 ${outsideIp}`,
        `GET a.wild.test:80 200 ${outsideIp}`,
        `GET allowed.test:80 200 ${outsideIp}`,
      ].sort(),
    );
  });

  it("is refused a host not on its template's list, CONNECT to a port other than 443, another port, and an IP literal", () => {
    for (const id of ["unlisted", "otherTemplate", "connect80", "port8080", "literal"]) {
      expect(answer(result, id), id).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    }
    const denied = result.egress?.decisions.filter((d) => d.decision === "denied") ?? [];
    expect(denied.map((d) => `${d.method} ${d.host}:${d.port}`)).toEqual(
      expect.arrayContaining([
        "GET evil.test:80",
        "GET other.test:80",
        "CONNECT allowed.test:80",
        "GET allowed.test:8080",
        `GET ${outsideIp}:80`,
      ]),
    );
    for (const d of denied) expect(d.server).toBeUndefined();
  });

  it("is refused an allowed name that resolves to a private, metadata or loopback address, before any connection", async () => {
    for (const id of ["private", "metadata", "loop"]) {
      expect(answer(result, id), id).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    }
    const denied = (host: string) =>
      result.egress?.decisions.find((d) => d.host === host && d.decision === "denied");
    for (const host of ["private.test", "metadata.test", "loop.test"]) {
      expect(denied(host), host).toMatchObject({ status: 403, squid: "TCP_DENIED", server: undefined });
    }
    // The private server on 10.250.77.0/24 never saw a connection.
    const logs = demuxLogs(
      (await docker.getContainer(`${privateNet}-server`).logs({ stdout: true, stderr: true })) as Buffer,
    );
    expect(logs.stdout + logs.stderr).not.toMatch(/GET|connect/i);
  });

  it("logs each decision with the task's address on its own network and its template's port", () => {
    const decisions = result.egress?.decisions ?? [];
    expect(decisions.length).toBe(11);
    expect(new Set(decisions.map((d) => d.client)).size).toBe(1);
    expect(new Set(decisions.map((d) => d.listener))).toEqual(new Set([proxy.listeners[1]?.port]));
    expect(result.egress?.network).toBe(`${name}-task-${result.id}-net`);
    // Each with its reason, as the template's list and the proxy's rules read it.
    const why = (method: string, host: string, port: number) =>
      decisions.find((d) => d.method === method && d.host === host && d.port === port)?.reason ?? "(none)";
    expect(why("GET", "allowed.test", 80)).toBe("on the template's allowlist");
    expect(why("GET", "evil.test", 80)).toMatch(/^not on the template's allowlist/);
    expect(why("GET", "other.test", 80)).toMatch(/^not on the template's allowlist/);
    expect(why("GET", outsideIp, 80)).toMatch(/^not on the template's allowlist/);
    expect(why("CONNECT", "allowed.test", 80)).toMatch(/^port 80 is not allowed/);
    expect(why("GET", "allowed.test", 8080)).toMatch(/^port 8080 is not allowed/);
    for (const host of ["private.test", "metadata.test"])
      expect(why("GET", host, 80)).toMatch(/resolves to a refused address/);
  });

  it("has no route but the proxy: the outside server by address, and the names without the proxy", async () => {
    const r = await launcher().run(specOf(project, "web"), {
      command: [
        "sh",
        "-c",
        [
          `echo "direct=$( { printf 'GET / HTTP/1.0\\r\\n\\r\\n'; sleep 1; } | nc -w 2 ${outsideIp} 80 2>&1 | head -n 1)"`,
          `echo "byname=$( { printf 'GET / HTTP/1.0\\r\\n\\r\\n'; sleep 1; } | nc -w 2 allowed.test 80 2>&1 | head -n 1)"`,
          "echo \"ifaces=$(ls /sys/class/net | tr '\\n' ' ')\"",
          "echo \"routes=$(ip route | tr '\\n' ';')\"",
        ].join("\n"),
      ],
      removeJobDir: true,
    });
    const line = (k: string) =>
      (r.stdout.split("\n").find((l) => l.startsWith(`${k}=`)) ?? "").slice(k.length + 1);
    expect(line("direct")).not.toContain("HTTP/");
    expect(line("byname")).not.toContain("HTTP/");
    expect(line("ifaces").trim().split(" ").sort()).toEqual(["eth0", "lo"]);
    expect(line("routes")).not.toContain(OUTSIDE_SUBNET.split("/")[0]);
    expect(r.egress?.decisions).toEqual([]);
  });

  it("leaves neither its network nor its container behind, and the proxy keeps only its own networks", async () => {
    const left = await docker.listNetworks({ filters: { label: [`${LABELS.task}`] } });
    expect(left.filter((n) => n.Name.startsWith(`${name}-task-`))).toEqual([]);
    const info = await docker.getContainer(webProxy()).inspect();
    expect(Object.keys(info.NetworkSettings.Networks).sort()).toEqual(
      [`${name}-net`, outsideNet, privateNet].sort(),
    );
  });
});

describe("a none-mode task", () => {
  it("cannot reach the proxy on any of its addresses", async () => {
    const info = await docker.getContainer(webProxy()).inspect();
    const ips = Object.values(info.NetworkSettings.Networks).map((n) => n.IPAddress);
    const port = proxy.listeners[0]?.port ?? 3128;
    const spec = specOf(project, "closed");
    expect(spec.network).toBe("none");
    const r = await launcher().run(spec, {
      command: [
        "sh",
        "-c",
        [...ips, proxy.name]
          .map(
            (ip) =>
              `echo "to ${ip}: $( { printf 'GET http://allowed.test/ HTTP/1.0\\r\\n\\r\\n'; sleep 1; } | nc -w 2 ${ip} ${port} 2>&1 | head -n 1)"`,
          )
          .join("\n"),
      ],
      removeJobDir: true,
    });
    expect(r.stdout.split("\n").filter(Boolean)).toHaveLength(ips.length + 1);
    expect(r.stdout).not.toContain("HTTP/");
    expect(r.egress).toBeUndefined();
  });
});

describe("proxy mode under gVisor", () => {
  it("the probe talks to gVisor and its egress is answered through the proxy", async () => {
    const t = project.spec.templates.zweb;
    if (t === undefined) throw new Error("no template");
    const { report, result } = await runProbe(launcher(), specOf(project, "zweb"), t);
    expect(report.walls[0]).toMatchObject({ wall: "kernel", ok: true });
    expect(report.walls.filter((w) => w.ok === false)).toEqual([]);
    expect(report.walls.find((w) => w.wall === "egress")?.observed).toBe("allowed");
    expect(result.egress?.decisions.map((d) => `${d.decision} ${d.host}`)).toEqual(["allowed allowed.test"]);
  });

  it.each(["exfiltrate-env", "metadata"] as const)(
    "%s is blocked under gVisor by the proxy",
    async (check) => {
      const r = await runEscape(launcher(), docker, specOf(project, "zweb"), check);
      expect(r.blocked).toBe(true);
      expect(r.leftovers).toEqual([]);
    },
  );
});

describe("walls in proxy mode", () => {
  it("the probe passes, its egress line answered through the proxy", async () => {
    const t = project.spec.templates.web;
    if (t === undefined) throw new Error("no template");
    const { report, result } = await runProbe(launcher(), specOf(project, "web"), t);
    expect(report.walls.filter((w) => w.ok === false)).toEqual([]);
    expect(report.walls.find((w) => w.wall === "egress")?.observed).toBe("allowed");
    expect(result.egress?.decisions.map((d) => `${d.decision} ${d.host}`)).toEqual(["allowed allowed.test"]);
  });

  it.each(["exfiltrate-env", "metadata"] as const)(
    "%s is blocked, with the proxy's decision as evidence",
    async (check) => {
      const r = await runEscape(launcher(), docker, specOf(project, "web"), check);
      expect(r.blocked).toBe(true);
      expect(r.leftovers).toEqual([]);
      expect(r.evidence).toMatch(
        /proxy denied (GET|POST) (169\.254\.169\.254|203\.0\.113\.7):80 \(TCP_DENIED\/403, no connection made\)/,
      );
    },
  );

  it("refuses a proxy-mode launch when the project has no proxy, before creating anything", async () => {
    const l = new Launcher(docker, {
      ledger: false,
      preflight: policyPreflight(),
      proxy: async () => undefined,
    });
    await expect(l.run(specOf(project, "web"), { id: "noproxy" })).rejects.toThrow(LaunchRefused);
    const created = await docker.listNetworks({ filters: { label: [`${LABELS.task}=noproxy`] } });
    expect(created).toEqual([]);
    expect(specOf(project, "web").network).toBe(PER_TASK_NETWORK);
  });
});

describe("the off switch", () => {
  it("removes the proxy and every project network, task networks included", async () => {
    // A task network as a killed launcher would leave it.
    await docker.createNetwork({
      Name: `${name}-task-orphan-net`,
      Internal: true,
      Labels: { [LABELS.project]: name, [LABELS.task]: "orphan" },
    });
    const report = await offSwitch(docker, name);
    expect(report.containers).toEqual(expect.arrayContaining(proxyUnits(proxy).map((u) => u.name)));
    expect(report.networks).toEqual(expect.arrayContaining([`${name}-net`, `${name}-task-orphan-net`]));
    expect(await projectLeftovers(docker, name)).toEqual([]);
  });
});
