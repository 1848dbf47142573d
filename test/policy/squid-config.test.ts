/**
 * The proxy's squid.conf judged as Squid reads it (policy/stack/squid-config.ts, squid-addresses.ts): the addresses
 * of `dst` ACL values, the refused destinations covered by several deny lines, the directives that run code or send
 * requests elsewhere, the built-in ACLs, and the project's own generated configuration.
 */
import { describe, expect, it } from "vitest";
import { proxyListeners, REFUSED_DESTINATIONS, resolveProject, squidConfig } from "../../components/model";
import { dstSpan, keptSpans, uncovered } from "../../policy/stack/squid-addresses";
import { allowlistProblem } from "../../policy/stack/squid-config";

const MAPPED = 0xffffn << 32n;
const v4 = (a: number, b: number, c: number, d: number) =>
  MAPPED | BigInt(((a << 24) >>> 0) + (b << 16) + (c << 8) + d);
const REFUSED = `acl refused_dst dst ${REFUSED_DESTINATIONS.join(" ")}`;
const conf = (...lines: string[]) => `http_port 3128\n${lines.join("\n")}\n`;
const STD = (...extra: string[]) =>
  conf(
    REFUSED,
    "acl allowed dstdomain -n pypi.org",
    ...extra,
    "http_access deny refused_dst",
    "http_access allow allowed",
    "http_access deny all",
  );

describe("the addresses of a dst ACL value, as Squid parses them", () => {
  it.each([
    ["10.0.0.0/8", v4(10, 0, 0, 0), v4(10, 255, 255, 255)],
    ["10.1.2.3/8", v4(10, 0, 0, 0), v4(10, 255, 255, 255)],
    ["10.0.0.0/255.0.0.0", v4(10, 0, 0, 0), v4(10, 255, 255, 255)],
    ["10.0.0.0-10.0.1.255", v4(10, 0, 0, 0), v4(10, 0, 1, 255)],
    ["10.0.0.0-10.0.1.0/24", v4(10, 0, 0, 0), v4(10, 0, 1, 255)],
    ["192.168.1.1", v4(192, 168, 1, 1), v4(192, 168, 1, 1)],
    // A mask of 0 is Squid's "no mask": the address alone.
    ["10.0.0.0/0", v4(10, 0, 0, 0), v4(10, 0, 0, 0)],
    ["::1", 1n, 1n],
    ["fe80::/10", 0xfe80n << 112n, (0xfec0n << 112n) - 1n],
    ["::ffff:a00:0/104", v4(10, 0, 0, 0), v4(10, 255, 255, 255)],
    ["all", 0n, (1n << 128n) - 1n],
    ["0.0.0.0/0", 0n, (1n << 128n) - 1n],
  ])("%s", (value, lo, hi) => {
    expect(dstSpan(value)).toEqual({ lo, hi });
  });

  it.each(["010.0.0.0/8", "10/8", "10.0.0.0/33", "metadata.google.internal", "ipv4", "::ffff:10.0.0.0/104"])(
    "does not read %s (it covers nothing)",
    (value) => {
      expect(dstSpan(value)).toBeUndefined();
    },
  );

  it("counts an entry only when no earlier one overlaps it, and nothing after a value it cannot read", () => {
    expect(keptSpans(["10.1.0.0/16", "10.0.0.0/8"])).toEqual([dstSpan("10.1.0.0/16")]);
    expect(keptSpans(["10.0.0.0/8", "192.168.0.0/16"])).toHaveLength(2);
    expect(keptSpans(["some.host", "10.0.0.0/8"])).toEqual([]);
  });

  it("judges coverage by address ranges, merged across ACLs", () => {
    const spans = [...keptSpans(["10.0.0.0/9"]), ...keptSpans(["10.128.0.0/9"])];
    expect(uncovered(spans, ["10.0.0.0/8"])).toBeUndefined();
    expect(uncovered(spans, ["10.0.0.0/8", "::1"])).toBe("::1");
  });
});

describe("a proxy's squid.conf", () => {
  it("passes the project's own generated configuration", () => {
    const project = resolveProject({
      name: "demo",
      budget: { monthlyCapUsd: 100 },
      templates: {
        web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org", "*.github.com"] } },
        alt: { image: "x:1", egress: { mode: "proxy", allow: ["example.org:8443"] } },
      },
    });
    expect(allowlistProblem(squidConfig(proxyListeners(project)))).toBeUndefined();
  });

  it.each([
    ["redirect_program /bin/sh /x.sh", "starts the URL rewriter it names"],
    ["storeurl_rewrite_program /bin/sh /x.sh", "starts the Store-ID helper it names"],
    ["sslpassword_program /x.sh", "through a shell (popen)"],
    ["mail_program mail", "through a shell (system)"],
    ["cache_mgr $(sh)", "write a plain e-mail address"],
    ["ssl_engine dynamic", "loads the OpenSSL engine"],
    ["ecap_service e reqmod_precache ecap://x", "loads an eCAP adapter"],
    ["cache_peer proxy.corp.example parent 3128 0", "exempt this resource"],
    ["icap_service s reqmod_precache icap://203.0.113.7:1344/r", "ICAP server"],
    ["cache_access_log udp://203.0.113.7:514", "log to stdio:, daemon: or syslog:"],
    ["tls_key_log tcp:203.0.113.7:9", "to the host it names"],
    ["dns_nameservers 10.96.0.10", "resolve names through the servers it names"],
    ["hosts_file /etc/sandbox-proxy/hosts", "resolve names from the file it names"],
  ])("refuses `%s`, named by its line", (line, text) => {
    const problem = allowlistProblem(STD(line));
    expect(problem).toContain(`\`${line}\``);
    expect(problem).toContain(text);
  });

  it.each([
    "cache_mgr ops@example.com",
    "hosts_file /etc/hosts",
    "access_log stdio:/dev/stdout",
    "access_log daemon:/var/log/squid/access.log",
    "netdb_filename none",
    "request_header_add X-Sandbox yes all",
    "tcp_outgoing_address 10.0.0.5",
  ])("passes `%s`", (line) => {
    expect(allowlistProblem(STD(line))).toBeUndefined();
  });

  it("takes `localhost` for the proxy's own clients only while the configuration neither extends it nor trusts what a client says", () => {
    const stock = (...extra: string[]) =>
      conf(
        REFUSED,
        "acl allowed dstdomain -n pypi.org",
        ...extra,
        "http_access allow localhost manager",
        "http_access deny manager",
        "http_access deny refused_dst",
        "http_access allow allowed",
        "http_access deny all",
      );
    expect(allowlistProblem(stock())).toBeUndefined();
    expect(allowlistProblem(stock("acl LocalHost src 0.0.0.0/1"))).toContain("manager ACL also matches");
    expect(allowlistProblem(stock("follow_x_forwarded_for allow all"))).toContain("manager ACL also matches");
    expect(allowlistProblem(stock("proxy_protocol_access allow all"))).toContain("manager ACL also matches");
  });

  it("refuses an allow line limited by manager alone: Squid forwards http://<host>/squid-internal-mgr/ to that host", () => {
    const problem = allowlistProblem(
      conf(
        REFUSED,
        "acl localnet src 10.0.0.0/8",
        "acl allowed dstdomain -n pypi.org",
        "http_access deny refused_dst",
        "http_access allow localnet manager",
        "http_access allow allowed",
        "http_access deny all",
      ),
    );
    expect(problem).toContain("`http_access allow localnet manager`");
    expect(problem).toContain("squid-internal-mgr");
  });

  it("names the first refused range the deny lines before an allow leave uncovered", () => {
    const problem = allowlistProblem(
      conf(
        "acl private dst 0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 172.16.0.0/12 192.168.0.0/16 ::1 fe80::/10 fc00::/7",
        "acl allowed dstdomain -n pypi.org",
        "http_access deny private",
        "http_access deny CONNECT to_linklocal",
        "http_access allow allowed",
        "http_access deny all",
      ),
    );
    expect(problem).toContain("comes before 169.254.0.0/16 is refused");
  });
});
