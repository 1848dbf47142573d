// `sandbox logs <stack> proxy|broker`: the proxy's decisions of a real run, read back from the engine with their
// reasons, as a user asks for them. The proxy's only way out is an internal network of the test's own, where a
// server answers to web.test: the allowed request reaches it (the negative control: the proxy does pass what the
// list names), the others are refused, each for its own reason.
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxySpec, resolveProject } from "../../components/model";
import { ensureProxy } from "../../runtime/proxy";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { frontStack } from "../helpers/front-stack";
import { internalNetwork, removeLabelled, testServer } from "../helpers/test-servers";

const TEST_LABEL = "sandbox.test";
const labels = { [TEST_LABEL]: "service-logs" };
const template = {
  image: TEST_IMAGE,
  timeoutSeconds: 30,
  egress: { mode: "proxy" as const, allow: ["web.test"] },
};
const stack = frontStack("lg", "lg", [
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
const TOKEN = `token-${Math.random().toString(36).slice(2, 10)}`;
let docker: Dockerode;

/** A plain HTTP request for `url` through the task's proxy (busybox nc), its answer on stdout. */
const ask = (url: string, host: string) =>
  `p="\${http_proxy#http://}"; { printf "GET ${url} HTTP/1.0\\r\\nHost: ${host}\\r\\n\\r\\n"; sleep 2; } | nc -w 4 "\${p%%:*}" "\${p##*:}";`;

beforeAll(async () => {
  docker = await requireDocker();
  await removeLabelled(docker, `${TEST_LABEL}=service-logs`);
  await internalNetwork(docker, outsideNet, "198.18.12.0/24", labels);
  await testServer(
    docker,
    outsideNet,
    ["web.test"],
    `mkdir -p /tmp/www && echo "${TOKEN}" > /tmp/www/index.html && exec httpd -f -p 80 -h /tmp/www`,
    labels,
  );
  const project = resolveProject({
    name,
    jobRoot,
    budget: { monthlyCapUsd: 100 },
    templates: { web: template },
  });
  const spec = proxySpec(project, `${name}-net`);
  if (spec === undefined) throw new Error("the stack has no proxy");
  await ensureProxy(docker, spec, "web", { egressNetwork: outsideNet });
}, 90_000);

afterAll(async () => {
  await stack.cleanup(docker);
  if (docker) await removeLabelled(docker, `${TEST_LABEL}=service-logs`);
});

describe("sandbox logs", () => {
  it("lists each decision of a run with its reason, as text and as JSON", async () => {
    const script = [
      ask("http://web.test/", "web.test"),
      ask("http://evil.test/", "evil.test"),
      ask("http://web.test:8080/", "web.test"),
    ].join(" ");
    const run = await front("run", "lg", "web", "--", "sh", "-c", script);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain(TOKEN);

    const json = await front("logs", "lg", "proxy", "--json");
    expect(json.code, json.err).toBe(0);
    const doc = JSON.parse(json.out) as {
      unit: string;
      entries: {
        template: string;
        decision?: { decision: string; host: string; port: number; reason: string };
      }[];
    };
    expect(doc.unit).toBe("proxy");
    const decisions = doc.entries.flatMap((e) =>
      e.decision === undefined
        ? []
        : [[e.template, e.decision.decision, `${e.decision.host}:${e.decision.port}`, e.decision.reason]],
    );
    expect(decisions).toEqual([
      ["web", "allowed", "web.test:80", "on the template's allowlist"],
      ["web", "denied", "evil.test:80", "not on the template's allowlist (an IP address never is)"],
      ["web", "denied", "web.test:8080", expect.stringMatching(/^port 8080 is not allowed for this name/)],
    ]);

    const text = await front("logs", "lg", "proxy", "--template", "web", "--since", "1h");
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/\[web\] denied GET evil\.test:80 403 \(not on the template's allowlist/);
    expect(text.out).toMatch(/\[web\] allowed GET web\.test:80 200 \(on the template's allowlist\)/);
    // Nothing since a moment still to come.
    const later = await front("logs", "lg", "proxy", "--since", "2099-01-01");
    expect(later.code, later.err).toBe(0);
    expect(later.out).toContain("no proxy lines since then");
  }, 120_000);

  it("says what is missing or wrong, naming the value and what is allowed", async () => {
    const broker = await front("logs", "lg", "broker");
    expect(broker.code).toBe(0);
    expect(broker.out).toContain("stack lg has no broker: no template names a broker route");
    const unit = await front("logs", "lg", "squid");
    expect(unit.code).toBe(2);
    expect(unit.err).toContain('name the unit, proxy or broker (got "squid")');
    const tpl = await front("logs", "lg", "proxy", "--template", "nope");
    expect(tpl.code).toBe(2);
    expect(tpl.err).toContain('--template "nope" is not one of stack lg\'s templates (web)');
    const since = await front("logs", "lg", "proxy", "--since", "yesterday");
    expect(since.code).toBe(2);
    expect(since.err).toContain('--since "yesterday"');
  });
});
