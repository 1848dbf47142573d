import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABELS, proxySpec, resolveProject } from "../../components/model";
import { ensureProxy } from "../../runtime/proxy";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { frontStack } from "../helpers/front-stack";
import { internalNetwork, removeLabelled, testServer } from "../helpers/test-servers";

const TEST_LABEL = "sandbox.test";
const stack = frontStack("os", "os", [
  "  sandbox:budget:",
  "    monthlyCapUsd: 100",
  "  sandbox:templates:",
  "    web:",
  `      image: ${TEST_IMAGE}`,
  "      timeoutSeconds: 30",
  "      egress:",
  "        mode: proxy",
  "        allow: [web.test]",
]);
const { name, jobRoot, front } = stack;
const outsideNet = `${name}-outside`;
// Not the project's: the off switch leaves the test's own "outside" alone.
const labels = { [TEST_LABEL]: "off-sticks" };
const TOKEN = `token-${Math.random().toString(36).slice(2, 10)}`;
const templates = {
  web: { image: TEST_IMAGE, timeoutSeconds: 30, egress: { mode: "proxy" as const, allow: ["web.test"] } },
};

let docker: Dockerode;

/** The project's proxy containers, running or not. */
async function proxies(): Promise<string[]> {
  const found = await docker.listContainers({
    all: true,
    filters: { label: [`${LABELS.project}=${name}`, `${LABELS.role}=proxy`] },
  });
  return found.map((c) => c.Names[0] ?? c.Id);
}

/** Starts template web's proxy as `up` would, from `allow`, reaching only the test's internal network. */
async function deployProxy(allow: readonly string[]): Promise<void> {
  const project = resolveProject({
    name,
    jobRoot,
    budget: { monthlyCapUsd: 100 },
    templates: { web: { ...templates.web, egress: { mode: "proxy", allow: [...allow] } } },
  });
  const spec = proxySpec(project, `${name}-net`);
  if (spec === undefined) throw new Error("no proxy");
  await ensureProxy(docker, spec, "web", { egressNetwork: outsideNet });
}

const fetchWeb = [
  "run",
  "os",
  "web",
  "--",
  "sh",
  "-c",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions
  'p="${http_proxy#http://}"; { printf "GET http://web.test/ HTTP/1.0\\r\\nHost: web.test\\r\\n\\r\\n"; sleep 2; } | nc -w 4 "${p%%:*}" "${p##*:}"',
];

beforeAll(async () => {
  docker = await requireDocker();
  await removeLabelled(docker, `${TEST_LABEL}=off-sticks`);
  await internalNetwork(docker, outsideNet, "198.18.11.0/24", labels);
  await testServer(
    docker,
    outsideNet,
    ["web.test"],
    `mkdir -p /tmp/www && echo "${TOKEN}" > /tmp/www/index.html && exec httpd -f -p 80 -h /tmp/www`,
    labels,
  );
}, 60_000);

afterAll(async () => {
  await stack.cleanup(docker);
  if (docker) await removeLabelled(docker, `${TEST_LABEL}=off-sticks`);
});

describe("the off switch sticks", () => {
  it("runs through the deployed proxy; after off, a proxy-mode run is refused naming up, and no proxy comes back", async () => {
    await deployProxy(["web.test"]);
    const before = await front("run", ...fetchWeb.slice(1));
    expect(before.code, before.err).toBe(0);
    expect(before.out).toContain(TOKEN);

    const off = await front("off", "os", "--yes");
    expect(off.code, off.err).toBe(0);
    expect(await proxies()).toEqual([]);

    const after = await front("run", ...fetchWeb.slice(1));
    expect(after.code).not.toBe(0);
    expect(after.err).toContain("has no running proxy (start it with `up`)");
    expect(after.out).not.toContain(TOKEN);
    expect(await proxies()).toEqual([]);
    const networks = await docker.listNetworks({ filters: { label: [`${LABELS.project}=${name}`] } });
    expect(networks.map((n) => n.Name).filter((n) => n !== outsideNet)).toEqual([]);
  }, 120_000);

  it("refuses a proxy made from another configuration than the stack's, and leaves it as it is", async () => {
    await deployProxy(["web.test", "else.test"]);
    const [made] = await proxies();
    const r = await front("run", ...fetchWeb.slice(1));
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/runs another configuration .* than the stack's .*; deploy the stack's with `up`/);
    expect(await proxies()).toEqual([made]);
  }, 120_000);
});
