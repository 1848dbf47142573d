/** Why the proxy decided as it did, from its decision line and the template's allowlist, as Squid's rules read them. */
import { describe, expect, it } from "vitest";
import { decisionReason, type ProxyDecision } from "../../components/model";

const ALLOW = ["pypi.org", "*.github.com", "api.example.com:8443"];
const line = (over: Partial<ProxyDecision>): ProxyDecision => ({
  time: 0,
  listener: 3128,
  client: "10.0.0.2",
  method: "GET",
  host: "pypi.org",
  port: 80,
  status: 200,
  decision: "allowed",
  squid: "TCP_MISS",
  server: "203.0.113.5",
  ...over,
});
const denied = (over: Partial<ProxyDecision>) =>
  line({ decision: "denied", status: 403, squid: "TCP_DENIED", server: undefined, ...over });

describe("decisionReason", () => {
  it("an allowed request is on the list; one the proxy could not complete failed upstream", () => {
    expect(decisionReason(line({}), ALLOW)).toBe("on the template's allowlist");
    expect(decisionReason(line({ status: 503, server: undefined, squid: "TCP_MISS" }), ALLOW)).toBe(
      "the name did not resolve or the upstream did not answer (status 503)",
    );
  });

  it.each([
    ["a name on no entry", { host: "evil.test" }, /^not on the template's allowlist/],
    ["an IP literal", { host: "203.0.113.5" }, /^not on the template's allowlist/],
    ["a suffix that is not a subdomain", { host: "evilgithub.com" }, /^not on the template's allowlist/],
    ["CONNECT to 80", { method: "CONNECT", port: 80 }, /^port 80 is not allowed/],
    ["plain 8080", { port: 8080 }, /^port 8080 is not allowed/],
    ["an entry's own port only", { host: "api.example.com", port: 443 }, /^port 443 is not allowed/],
    [
      "a listed name on an allowed port",
      { host: "api.github.com", method: "CONNECT", port: 443 },
      /resolves to a refused address/,
    ],
    ["the bare suffix of a wildcard", { host: "GitHub.com" }, /resolves to a refused address/],
    ["the entry's own port", { host: "api.example.com", port: 8443 }, /resolves to a refused address/],
  ])("a denied request: %s", (_what, over, reason) => {
    expect(decisionReason(denied(over), ALLOW)).toMatch(reason);
  });
});
