/**
 * The off switch sticks: `run` uses the proxy `up` deployed and never starts or replaces one itself. After `off`, a
 * proxy-mode run is refused naming `up`, and nothing comes back; a proxy made from another configuration than the
 * stack's is refused too, not replaced behind the stack's back. On the real engine, with a stack of its own; the
 * proxy's only way out is an `internal` network this test creates (nothing leaves the machine).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { LABELS, proxySpec, resolveProject } from "../../components/model";
import { offSwitch } from "../../runtime/offSwitch";
import { ensureProxy } from "../../runtime/proxy";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { internalNetwork, removeLabelled, testServer } from "../helpers/test-servers";

const TEST_LABEL = "sandbox.test";
const name = `os-${Math.random().toString(36).slice(2, 8)}`;
const root = mkdtempSync(join(tmpdir(), `${name}-root-`));
const jobRoot = join(root, "jobs");
const outsideNet = `${name}-outside`;
// Not the project's: the off switch leaves the test's own "outside" alone.
const labels = { [TEST_LABEL]: "off-sticks" };
const TOKEN = `token-${Math.random().toString(36).slice(2, 10)}`;
const templates = {
  web: { image: TEST_IMAGE, timeoutSeconds: 30, egress: { mode: "proxy" as const, allow: ["web.test"] } },
};

let docker: Dockerode;

async function front(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) }, root);
  return { code, out: out.join(""), err: err.join("") };
}

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
  mkdirSync(join(root, "stacks"));
  writeFileSync(
    join(root, "stacks", "Pulumi.os.yaml"),
    [
      "config:",
      `  sandbox:name: ${name}`,
      `  sandbox:jobRoot: ${jobRoot}`,
      "  sandbox:budget:",
      "    monthlyCapUsd: 100",
      "  sandbox:templates:",
      "    web:",
      `      image: ${TEST_IMAGE}`,
      "      timeoutSeconds: 30",
      "      egress:",
      "        mode: proxy",
      "        allow: [web.test]",
      "",
    ].join("\n"),
  );
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
  if (docker) {
    await offSwitch(docker, name, { jobRoot });
    await removeLabelled(docker, `${TEST_LABEL}=off-sticks`);
  }
  rmSync(root, { recursive: true, force: true });
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
