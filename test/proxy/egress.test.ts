import { describe, expect, it } from "vitest";
import {
  dedupeDomains,
  launchSpec,
  parseDecisionLog,
  proxyListeners,
  proxySpec,
  REFUSED_DESTINATIONS,
  resolveProject,
  squidConfig,
} from "../../components/model";

const project = resolveProject({
  name: "demo",
  budget: { monthlyCapUsd: 100 },
  templates: {
    web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org", "*.github.com", "api.github.com"] } },
    alt: { image: "x:1", egress: { mode: "proxy", allow: ["example.org:8443"] } },
    closed: { image: "x:1" },
  },
});

describe("the proxy's listeners", () => {
  it("gives each proxy-mode template its own port, in name order from proxyPort", () => {
    expect(proxyListeners(project)).toEqual([
      { template: "alt", port: 3128, allow: ["example.org:8443"] },
      { template: "web", port: 3129, allow: ["pypi.org", "*.github.com", "api.github.com"] },
    ]);
    expect(launchSpec(project, "web", "demo-net").env.HTTP_PROXY).toBe("http://demo-proxy:3129");
    expect(launchSpec(project, "closed", "demo-net").env.HTTP_PROXY).toBeUndefined();
  });

  it("has no proxy without a proxy-mode template", () => {
    const none = resolveProject({
      name: "n",
      budget: { monthlyCapUsd: 10 },
      templates: { t: { image: "x:1" } },
    });
    expect(proxySpec(none, "n-net")).toBeUndefined();
  });
});

describe("the generated Squid configuration", () => {
  const conf = squidConfig(proxyListeners(project));
  const lines = conf.split("\n");

  it("caches nothing and logs every decision to stdout", () => {
    expect(lines).toEqual(expect.arrayContaining(["cache deny all", "cache_mem 0 MB", "pid_filename none"]));
    expect(conf).toMatch(/^access_log stdio:\/dev\/stdout logformat=sandbox$/m);
  });

  it("refuses the private, loopback, link-local and unique-local ranges after resolution", () => {
    expect(lines).toContain(`acl refused_dst dst ${REFUSED_DESTINATIONS.join(" ")}`);
    expect(REFUSED_DESTINATIONS).toEqual([
      "0.0.0.0/8",
      "10.0.0.0/8",
      "100.64.0.0/10",
      "127.0.0.0/8",
      "169.254.0.0/16",
      "172.16.0.0/12",
      "192.168.0.0/16",
      "::1",
      "fe80::/10",
      "fc00::/7",
    ]);
  });

  it("judges the name first (no lookup for names on no list), then the address, then the port", () => {
    const access = lines.filter((l) => l.startsWith("http_access"));
    expect(access).toEqual([
      "http_access deny manager",
      "http_access deny via_alt !host_alt",
      "http_access deny via_web !host_web",
      "http_access deny refused_dst",
      "http_access allow via_alt allow_alt_8443 port_8443",
      "http_access allow via_web allow_web CONNECT tls_port",
      "http_access allow via_web allow_web !CONNECT web_ports",
      "http_access deny all",
    ]);
  });

  it("turns *.suffix into Squid's .suffix and drops names a wildcard already covers", () => {
    expect(lines).toContain("acl allow_web dstdomain -n .github.com pypi.org");
    expect(lines).toContain("http_port 3129 name=t_web");
    expect(dedupeDomains(["a.b.c", ".b.c", "b.c", "x.y", "x.y"])).toEqual([".b.c", "x.y"]);
  });
});

describe("the decision log", () => {
  it("parses allowed and denied decisions with the address dialled (or none)", () => {
    const log = [
      "sandbox.decision 1795973940.057 listener=3129 client=172.28.0.3 method=GET host=allowed.test port=80 status=200 squid=TCP_MISS server=198.18.0.2",
      "2026/11/29 17:36:40| some cache.log line",
      "sandbox.decision 1795973941.001 listener=3129 client=172.28.0.3 method=CONNECT host=meta.test port=443 status=403 squid=TCP_DENIED server=-",
    ].join("\n");
    expect(parseDecisionLog(log)).toEqual([
      {
        time: 1795973940.057,
        listener: 3129,
        client: "172.28.0.3",
        method: "GET",
        host: "allowed.test",
        port: 80,
        status: 200,
        decision: "allowed",
        squid: "TCP_MISS",
        server: "198.18.0.2",
      },
      {
        time: 1795973941.001,
        listener: 3129,
        client: "172.28.0.3",
        method: "CONNECT",
        host: "meta.test",
        port: 443,
        status: 403,
        decision: "denied",
        squid: "TCP_DENIED",
        server: undefined,
      },
    ]);
  });
});
