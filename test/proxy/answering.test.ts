/**
 * Egress walls on the real Docker engine, each proven against a target that answers when the wall is down, with that
 * negative control in the same test: a service on the host bound to every address (the test's own process), the
 * other template's proxy listener, and a server at the metadata address. Nothing leaves the machine: the servers
 * live on `internal` networks this test creates (198.18.7.0/24 and 169.254.169.0/24) and in this process.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABELS, type ProxySpec, proxySpec, proxyUnits } from "../../components/model";
import { demuxLogs } from "../../runtime/docker/client";
import { Launcher, type TaskResult } from "../../runtime/launcher";
import { offSwitch } from "../../runtime/offSwitch";
import { policyPreflight } from "../../runtime/preflight";
import { ensureProxy } from "../../runtime/proxy";
import { runEscape } from "../../runtime/walls";
import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";
import { internalNetwork, removeLabelled, testServer } from "../helpers/test-servers";

const TEST_LABEL = "sandbox.test";
const OUTSIDE_SUBNET = "198.18.7.0/24";
const METADATA_SUBNET = "169.254.169.0/24";
const METADATA_IP = "169.254.169.254";
const HOST_TOKEN = `host-${randomBytes(6).toString("hex")}`;
const OUTSIDE_TOKEN = `outside-${randomBytes(6).toString("hex")}`;
const METADATA_TOKEN = `metadata-${randomBytes(6).toString("hex")}`;

const project = testProject("ans", {
  web: {
    image: TEST_IMAGE,
    timeoutSeconds: 60,
    egress: { mode: "proxy", allow: ["web.test", "metadata.test"] },
  },
  other: { image: TEST_IMAGE, timeoutSeconds: 60, egress: { mode: "proxy", allow: ["other.test"] } },
  // The same walls under gVisor: its own network stack on the same kind of task network.
  zweb: {
    image: TEST_IMAGE,
    runtime: "runsc",
    timeoutSeconds: 60,
    egress: { mode: "proxy", allow: ["web.test", "metadata.test"] },
  },
  closed: { image: TEST_IMAGE, timeoutSeconds: 30 },
});
const name = project.spec.name;
const outsideNet = `${name}-outside`;
const metadataNet = `${name}-metadata`;
const plainNet = `${name}-plain`;
const labels = { [TEST_LABEL]: "answering", [LABELS.project]: name };
const proxyOptions = { egressNetwork: outsideNet, extraHosts: [`metadata.test:${METADATA_IP}`] };

let docker: Dockerode;
let proxy: ProxySpec;
let hostService: Server;
let hostPort = 0;
let metadataServer: Dockerode.Container;

const launcher = () =>
  new Launcher(docker, {
    ledger: false,
    preflight: policyPreflight(),
    proxy: (s) => ensureProxy(docker, proxy, s.template, proxyOptions),
  });

/** Runs `script` once in a plain container on `network` (the wall down) and returns its output. */
async function fromPlainContainer(network: string, script: string): Promise<string> {
  const c = await docker.createContainer({
    Image: TEST_IMAGE,
    Cmd: ["sh", "-c", script],
    Labels: { ...labels },
    HostConfig: { NetworkMode: network, CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges:true"] },
  });
  try {
    await c.start();
    await c.wait();
    const logs = demuxLogs((await c.logs({ stdout: true, stderr: true })) as Buffer);
    return `${logs.stdout}${logs.stderr}`;
  } finally {
    await c.remove({ force: true });
  }
}

/** How many requests the metadata server has answered so far. */
async function metadataRequests(): Promise<number> {
  const seen = demuxLogs((await metadataServer.logs({ stdout: true, stderr: true })) as Buffer);
  return (`${seen.stdout}${seen.stderr}`.match(/url:\/latest/g) ?? []).length;
}

/** What the task printed after `key=` on its own line. */
function line(result: TaskResult | string, key: string): string {
  const text = typeof result === "string" ? result : result.stdout;
  return (text.split("\n").find((l) => l.startsWith(`${key}=`)) ?? "").slice(key.length + 1);
}

/** The host's own IPv4 addresses (every interface but loopback): where a service bound to all of them answers. */
function hostAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => a.family === "IPv4" && !a.internal)
    .map((a) => a.address);
}

/** A direct GET (the proxy variables dropped) of `http://<address>:<port>/` for each address, printed as `<address>=<first line of body>`. */
function directGets(addresses: readonly string[], port: number): string {
  return [
    "unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY",
    `gw="$(ip route | awk '/^default/ {print $3}')"`,
    'echo "gateway=$gw"',
    `for a in "$gw" ${addresses.join(" ")}; do`,
    `  ( echo "$a=$(timeout 4 wget -q -O- "http://$a:${port}/" 2>&1 | head -n 1)" ) &`,
    "done",
    "wait",
  ].join("\n");
}

beforeAll(async () => {
  docker = await requireDocker();
  await removeLabelled(docker, `${TEST_LABEL}=answering`);
  hostService = createServer((_req, res) => res.end(`${HOST_TOKEN}\n`));
  await new Promise<void>((resolve) => hostService.listen(0, "0.0.0.0", resolve));
  hostPort = (hostService.address() as AddressInfo).port;
  await internalNetwork(docker, outsideNet, OUTSIDE_SUBNET, labels);
  await internalNetwork(docker, metadataNet, METADATA_SUBNET, labels);
  await docker.createNetwork({ Name: plainNet, Internal: true, Labels: { ...labels } });
  await testServer(
    docker,
    outsideNet,
    ["web.test", "other.test"],
    `mkdir -p /tmp/www && echo "${OUTSIDE_TOKEN}" > /tmp/www/index.html && exec httpd -f -vv -p 80 -h /tmp/www`,
    labels,
  );
  metadataServer = await testServer(
    docker,
    metadataNet,
    [],
    `mkdir -p /tmp/www/latest/meta-data && echo "${METADATA_TOKEN}" > /tmp/www/latest/meta-data/index.html && exec httpd -f -vv -p 80 -h /tmp/www`,
    labels,
    {
      NetworkingConfig: { EndpointsConfig: { [metadataNet]: { IPAMConfig: { IPv4Address: METADATA_IP } } } },
    },
  );
  const spec = proxySpec(project, `${name}-net`);
  if (spec === undefined) throw new Error("no proxy");
  proxy = spec;
  // Each template's own proxy can reach the metadata server: only its rules stand between a task and it.
  for (const unit of proxyUnits(proxy)) {
    const container = await ensureProxy(docker, proxy, unit.listeners[0]?.template ?? "", proxyOptions);
    if (container !== undefined) await docker.getNetwork(metadataNet).connect({ Container: container.id });
  }
}, 90_000);

afterAll(async () => {
  hostService?.close();
  if (!docker) return;
  await offSwitch(docker, name);
  await removeLabelled(docker, `${TEST_LABEL}=answering`);
});

describe("a service on the host, bound to every host address", () => {
  it.each(["web", "zweb"])(
    "answers a container on an internal network through its gateway (the control), and no proxy-mode task (%s) at any host address",
    async (template) => {
      const addresses = hostAddresses();
      expect(addresses.length).toBeGreaterThan(0);
      const control = await fromPlainContainer(plainNet, directGets([], hostPort));
      expect(line(control, line(control, "gateway"))).toBe(HOST_TOKEN);

      const task = await launcher().run(specOf(project, template), {
        command: ["sh", "-c", directGets(addresses, hostPort)],
        removeJobDir: true,
      });
      expect(line(task, "gateway")).not.toBe("");
      expect(task.stdout).not.toContain(HOST_TOKEN);
      for (const a of [line(task, "gateway"), ...addresses]) expect(task.stdout).toContain(`${a}=`);
      expect(task.egress?.decisions).toEqual([]);
    },
    90_000,
  );
});

describe("another template's proxy listener", () => {
  it("answers its own template's task (the control) and never another template's, whichever port it picks", async () => {
    const otherPort = proxy.listeners.find((l) => l.template === "other")?.port;
    const get = [
      "unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY",
      `echo "answer=$( { printf 'GET http://other.test/ HTTP/1.0\\r\\nHost: other.test\\r\\n\\r\\n'; sleep 2; } | nc -w 4 ${proxy.name} ${otherPort} 2>&1 | tr '\\r\\n' '  ')"`,
    ].join("\n");
    const own = await launcher().run(specOf(project, "other"), {
      command: ["sh", "-c", get],
      removeJobDir: true,
    });
    expect(line(own, "answer")).toMatch(/^HTTP\/1\.[01] 200/);
    expect(line(own, "answer")).toContain(OUTSIDE_TOKEN);

    const crossed = await launcher().run(specOf(project, "web"), {
      command: ["sh", "-c", get],
      removeJobDir: true,
    });
    expect(line(crossed, "answer")).not.toContain("HTTP/");
    expect(line(crossed, "answer")).not.toContain(OUTSIDE_TOKEN);
    expect(crossed.egress?.decisions).toEqual([]);
  }, 90_000);
});

describe("a server at the metadata address", () => {
  it.each(["web", "zweb"])(
    "answers a container on its network (the control); the proxy refuses it by address and name, and no task (%s) reaches it directly",
    async (template) => {
      const control = await fromPlainContainer(
        metadataNet,
        `timeout 4 wget -q -O- http://${METADATA_IP}/latest/meta-data/`,
      );
      expect(control).toContain(METADATA_TOKEN);
      expect(await metadataRequests()).toBeGreaterThan(0);

      const seenBefore = await metadataRequests();
      const proxied = await runEscape(launcher(), docker, specOf(project, template), "metadata");
      expect(proxied.blocked, proxied.evidence).toBe(true);
      expect(proxied.evidence).toMatch(
        /proxy denied GET 169\.254\.169\.254:80 \(TCP_DENIED\/403, no connection made\)/,
      );
      const closed = await runEscape(launcher(), docker, specOf(project, "closed"), "metadata");
      expect(closed.blocked, closed.evidence).toBe(true);

      const task = await launcher().run(specOf(project, template), {
        command: [
          "sh",
          "-c",
          [
            `echo "byName=$(timeout 4 wget -q -O- http://metadata.test/latest/meta-data/ 2>&1 | head -n 1)"`,
            directGets([METADATA_IP], 80),
          ].join("\n"),
        ],
        removeJobDir: true,
      });
      expect(task.stdout).not.toContain(METADATA_TOKEN);
      expect(task.egress?.decisions.map((d) => `${d.decision} ${d.host}`)).toEqual(["denied metadata.test"]);
      // The server saw the control's request and nothing else.
      expect(await metadataRequests()).toBe(seenBefore);
    },
    120_000,
  );
});
