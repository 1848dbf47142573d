/**
 * The broker's spec, its generated HAProxy configuration and its log, without an engine. The path patterns are
 * checked as the broker applies them (the same regular expressions, run here), with generated paths: whatever a
 * pattern admits stays inside the route, and a spelling an upstream could decode into another path never passes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BROKER_URL_ENV,
  brokerCredentialValue,
  brokerSpec,
  haproxyConfig,
  launchSpec,
  parseBrokerLog,
  parseUpstream,
  pathPatternRegex,
  REFUSED_DESTINATIONS,
  resolveProject,
  SpecError,
  UNSAFE_PATH,
} from "../../components/model";
import {
  brokerCredentialsFromConfig,
  checkBrokerCredentialKeys,
  projectFromConfig,
} from "../../stacks/config";

const route = (extra: Record<string, unknown> = {}) => ({
  upstream: "https://api.example.com/v3",
  paths: ["/repos/*/issues", "/user"],
  credential: { secret: "ghToken", prefix: "Bearer " },
  ...extra,
});
const project = (routes: Record<string, unknown>, templates: Record<string, unknown>) =>
  resolveProject({ name: "demo", budget: { monthlyCapUsd: 100 }, broker: { routes }, templates });

function problems(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (e instanceof SpecError) return e.message.split("\n").slice(1);
    throw e;
  }
  return [];
}

/** The JavaScript reading of an HAProxy PCRE pattern (`(?i)` becomes the `i` flag). */
const pcre = (re: string) => (re.startsWith("(?i)") ? new RegExp(re.slice(4), "i") : new RegExp(re));

describe("the broker's routes in the spec", () => {
  it("gives each template that calls routes its own port and its tasks the broker's address", () => {
    const p = project(
      { gh: route(), npm: route({ upstream: "https://registry.npmjs.org" }) },
      {
        build: { image: "x:1", broker: ["npm", "gh", "npm"] },
        agent: { image: "x:1", broker: ["gh"] },
        quiet: { image: "x:1" },
      },
    );
    const b = brokerSpec(p, "demo-net");
    expect(b?.listeners).toEqual([
      { template: "agent", port: 8080, routes: ["gh"] },
      { template: "build", port: 8081, routes: ["gh", "npm"] },
    ]);
    expect(launchSpec(p, "build", "demo-net").env[BROKER_URL_ENV]).toBe("http://demo-broker:8081");
    expect(launchSpec(p, "build", "demo-net").network).toBe("sandbox:per-task");
    expect(launchSpec(p, "quiet", "demo-net").env[BROKER_URL_ENV]).toBeUndefined();
    expect(launchSpec(p, "quiet", "demo-net").network).toBe("none");
    expect(b?.credentials.map((c) => `${c.route} ${c.configKey} ${c.variable}`)).toEqual([
      "gh sandbox:ghToken SANDBOX_BROKER_CRED_GH",
      "npm sandbox:ghToken SANDBOX_BROKER_CRED_NPM",
    ]);
    expect(b?.config).not.toMatch(/ghToken/);
  });

  it("prices the broker as always on, with the proxy when both run", () => {
    const p = project(
      { gh: route() },
      { t: { image: "x:1", broker: ["gh"], egress: { mode: "proxy", allow: ["pypi.org"] } } },
    );
    expect(p.budget.arithmetic).toContain("(1 proxy + 1 broker) × (0.75 vCPU");
  });

  it.each([
    [{ upstream: "https://10.0.0.1" }, "routes.r.upstream"],
    [{ upstream: "https://user:pw@api.example.com" }, "routes.r.upstream"],
    [{ upstream: "ftp://api.example.com" }, "routes.r.upstream"],
    [{ upstream: "https://api.example.com/?q=1" }, "routes.r.upstream"],
    [{ upstream: "https://API.example.com" }, "routes.r.upstream"],
    [{ methods: ["get"] }, "routes.r.methods[0]"],
    [{ methods: [] }, "routes.r.methods"],
    [{ paths: [] }, "routes.r.paths"],
    [{ paths: ["repos"] }, "routes.r.paths[0]"],
    [{ paths: ["/a/../b"] }, "routes.r.paths[0]"],
    [{ paths: ["/a/%2e"] }, "routes.r.paths[0]"],
    [{ paths: ["/a**"] }, "routes.r.paths[0]"],
    [{ credential: { secret: "t", header: "Host" } }, "routes.r.credential.header"],
    [{ credential: { secret: "t", header: "X-A", query: "k" } }, "routes.r.credential.query"],
    [{ credential: { secret: "t", value: "abc" } }, "routes.r.credential.value"],
    [{ rateLimit: { requests: 0, perSeconds: 1 } }, "routes.r.rateLimit.requests"],
  ])("refuses %j at %s", (extra, key) => {
    const found = problems(() => project({ r: route(extra) }, { t: { image: "x:1", broker: ["r"] } }));
    expect(
      found.some((l) => l.includes(`broker.${key}`)),
      found.join("\n"),
    ).toBe(true);
  });

  it("refuses a literal credential where a config key belongs, without printing it", () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    const found = problems(() =>
      project(
        { r: route({ credential: { secret: `Bearer ${token}` } }) },
        { t: { image: "x:1", broker: ["r"] } },
      ),
    );
    expect(found.join("\n")).toContain("broker.routes.r.credential.secret: must name a config key");
    expect(found.join("\n")).not.toContain(token);
  });

  it("refuses a template's unknown route, routes without a broker, and a broker no template calls", () => {
    expect(problems(() => project({ r: route() }, { t: { image: "x:1", broker: ["nope"] } }))).toEqual([
      '  - templates.t.broker[0] = "nope": no such broker route; the broker has: r',
    ]);
    expect(
      problems(() =>
        resolveProject({
          name: "d",
          budget: { monthlyCapUsd: 9 },
          templates: { t: { image: "x:1", broker: ["r"] } },
        }),
      ),
    ).toEqual([
      '  - templates.t.broker[0] = "r": the project has no broker; declare the route under broker.routes',
    ]);
    expect(problems(() => project({ r: route() }, { t: { image: "x:1" } }))).toEqual([
      "  - broker: no template calls the broker; add broker: [<route>] to the templates that need it, or remove the broker",
    ]);
    expect(problems(() => project({}, { t: { image: "x:1" } }))[0]).toContain("broker.routes");
  });

  it("does not let a template set the broker's address itself", () => {
    const found = problems(() =>
      resolveProject({
        name: "d",
        budget: { monthlyCapUsd: 9 },
        templates: { t: { image: "x:1", env: { SANDBOX_BROKER_URL: "http://evil" } } },
      }),
    );
    expect(found.join("\n")).toContain("the broker's address is set by the toolkit");
  });
});

describe("path patterns as the broker applies them", () => {
  const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,8}$/).filter((s) => s !== "." && s !== "..");

  it("* admits one segment, ** any number, and nothing outside the literal parts", () => {
    const star = new RegExp(pathPatternRegex("/repos/*/issues"));
    const deep = new RegExp(pathPatternRegex("/packages/**"));
    fc.assert(
      fc.property(segment, fc.array(segment, { maxLength: 4 }), (s, more) => {
        expect(star.test(`/repos/${s}/issues`)).toBe(true);
        expect(star.test(`/repos/${s}/x/issues`)).toBe(false);
        expect(star.test(`/repos/${s}/issues/${s}`)).toBe(false);
        expect(deep.test(`/packages${more.map((m) => `/${m}`).join("")}`)).toBe(true);
        expect(deep.test(`/other/${s}`)).toBe(false);
      }),
    );
    expect(new RegExp(pathPatternRegex("/")).test("/")).toBe(true);
    expect(new RegExp(pathPatternRegex("/")).test("/x")).toBe(false);
  });

  it("never admits a spelling an upstream could decode or resolve into another path", () => {
    const unsafe = pcre(UNSAFE_PATH);
    const dot = fc.constantFrom("..", ".", "..;", ".;x", "%2e%2e", "%2E.", ".%2e");
    const sep = fc.constantFrom("%2f", "%2F", "%5c", "%5C", "\\", "//", "%252f", "%00", "%0a", "%7f");
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 3 }), dot, sep, (head, d, s) => {
        const base = `/${head.join("/")}`;
        expect(unsafe.test(`${base}/${d}/admin`)).toBe(true);
        expect(unsafe.test(`${base}/${d}`)).toBe(true);
        expect(unsafe.test(`${base}${s}admin`)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), (segs) => {
        expect(unsafe.test(`/${segs.join("/")}`)).toBe(false);
      }),
    );
  });
});

describe("the generated HAProxy configuration", () => {
  const p = project(
    {
      gh: route({
        methods: ["POST", "GET"],
        rateLimit: { requests: 60, perSeconds: 60 },
        maxResponseBytes: 1000,
      }),
      q: {
        upstream: "http://q.example.org:8080",
        paths: ["/**"],
        credential: { secret: "other:q", query: "api_key" },
      },
    },
    { a: { image: "x:1", broker: ["gh"] }, b: { image: "x:1", broker: ["q", "gh"] } },
  );
  const conf = brokerSpec(p, "demo-net")?.config ?? "";
  const lines = conf.split("\n").map((l) => l.trim());

  it("admits on each template's port only its routes", () => {
    expect(conf).toMatch(/frontend via_a\n {2}bind :8080\n/);
    expect(conf).toMatch(/frontend via_b\n {2}bind :8081\n/);
    expect(lines).toContain("http-request deny deny_status 404 unless { var(txn.route) -m str gh q }");
    expect(lines).toContain("http-request deny deny_status 404 unless { var(txn.route) -m str gh }");
  });

  it("checks method and path, replaces the task's credentials with the route's variable, and names no secret", () => {
    expect(lines).toContain("http-request deny deny_status 405 unless { method GET POST }");
    expect(lines).toContain(
      "http-request deny deny_status 403 unless { var(txn.rest) -m reg '^/repos/[^/]*/issues$' '^/user$' }",
    );
    expect(lines).toContain("http-request del-header Authorization");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HAProxy's variable reference, as the file holds it
    expect(lines).toContain('http-request set-header Authorization "Bearer ${SANDBOX_BROKER_CRED_GH}"');
    expect(lines).toContain(
      "http-request deny deny_status 400 if { query,url_dec -m reg -i '(?:^|&)api_key(?:[=&]|$)' }",
    );
    expect(lines).toContain('http-request set-path "/v3%[var(txn.rest)]"');
  });

  it("resolves the upstream, refuses every refused range, and connects to exactly the address it judged", () => {
    expect(lines).toContain("http-request do-resolve(txn.dst,sandbox,ipv4) str(api.example.com)");
    expect(lines).toContain(
      `http-request deny deny_status 403 if { var(txn.dst) -m ip ${REFUSED_DESTINATIONS.join(" ")} }`,
    );
    expect(lines).toContain("http-request set-dst var(txn.dst)");
    expect(lines).toContain(
      "server upstream 0.0.0.0:443 ssl verify required ca-file /etc/ssl/certs/ca-certificates.crt sni str(api.example.com) verifyhost api.example.com",
    );
    expect(lines).toContain("server upstream 0.0.0.0:8080");
    expect(lines).toContain("http-reuse never");
    const order = ["do-resolve", "deny_status 403 if { var(txn.dst)", "set-dst"].map((s) =>
      lines.findIndex((l) => l.includes(s)),
    );
    expect(order).toEqual([...order].sort((x, y) => x - y));
  });

  it("strips credential-bearing response headers and applies the caps", () => {
    expect(lines).toEqual(
      expect.arrayContaining([
        "http-response del-header Set-Cookie",
        "http-response del-header Authentication-Info",
      ]),
    );
    expect(lines).toContain("http-request deny deny_status 429 if { sc_http_req_rate(0) gt 60 }");
    expect(lines).toContain(
      "http-response deny deny_status 502 if { res.hdr(content-length) -m int gt 1000 }",
    );
  });

  it("is the same text for the same routes", () => {
    expect(haproxyConfig(brokerSpec(p, "x")?.listeners ?? [], p.spec.broker?.routes ?? {})).toBe(conf);
    expect(parseUpstream("http://q.example.org:8080")).toEqual({
      scheme: "http",
      host: "q.example.org",
      port: 8080,
      basePath: "",
    });
  });
});

describe("credentials", () => {
  it("are refused with a control character, a quote or a backslash, and have % doubled for HAProxy", () => {
    expect(brokerCredentialValue("a%b")).toEqual({ value: "a%%b" });
    for (const bad of ["a\nb", 'a"b', "a\\b", "", "é"])
      expect("problem" in brokerCredentialValue(bad)).toBe(true);
  });

  it("come from secret config keys only; a plain or missing key is named, its value never shown", () => {
    const config = {
      "sandbox:broker": JSON.stringify({ routes: { gh: route({ credential: { secret: "ghToken" } }) } }),
      "sandbox:templates": JSON.stringify({ t: { image: "x:1", broker: ["gh"] } }),
      "sandbox:budget": JSON.stringify({ monthlyCapUsd: 10 }),
      "sandbox:ghToken": "plain-value-1234",
    };
    const resolved = projectFromConfig(config, "dev");
    expect(brokerCredentialsFromConfig(config, resolved, () => true)).toEqual({ gh: "plain-value-1234" });
    const plain = problems(() => brokerCredentialsFromConfig(config, resolved, () => false));
    expect(plain.join("\n")).toContain("sandbox:ghToken: holds route gh's credential as plain text");
    expect(plain.join("\n")).not.toContain("plain-value-1234");
    const { "sandbox:ghToken": _gone, ...without } = config;
    expect(problems(() => brokerCredentialsFromConfig(without, resolved, () => true)).join("\n")).toContain(
      "./sandbox config set <stack> sandbox:ghToken --secret",
    );
  });
});

describe("the front's check of a stack file", () => {
  const file = (token: unknown) => ({
    "sandbox:broker": JSON.stringify({ routes: { gh: route({ credential: { secret: "ghToken" } }) } }),
    "sandbox:templates": JSON.stringify({ t: { image: "x:1", broker: ["gh"] } }),
    "sandbox:budget": JSON.stringify({ monthlyCapUsd: 10 }),
    ...(token === undefined
      ? {}
      : { "sandbox:ghToken": typeof token === "string" ? token : JSON.stringify(token) }),
  });

  it("takes an encrypted value, and refuses a plain or missing one before the engine starts", () => {
    const secure = file({ secure: "v1:AAAABBBB" });
    expect(() => checkBrokerCredentialKeys(secure, projectFromConfig(secure, "dev"))).not.toThrow();
    const plain = file("ghp_0123456789abcdefghijABCDEFGHIJ012345");
    const said = problems(() => checkBrokerCredentialKeys(plain, projectFromConfig(plain, "dev"))).join("\n");
    expect(said).toContain("sandbox:ghToken: holds route gh's credential as plain text");
    expect(said).not.toContain("ghp_0123");
    const missing = file(undefined);
    expect(
      problems(() => checkBrokerCredentialKeys(missing, projectFromConfig(missing, "dev"))).join("\n"),
    ).toContain("names a config key that is not set");
  });
});

describe("the broker's log", () => {
  it("reads one call a line and skips HAProxy's notices", () => {
    const text = [
      "[NOTICE]   (1) : haproxy version is 2.6.12",
      'sandbox-broker 1796197917 198.18.5.4 "gh" GET "/gh/user" 200 171 2 upstream',
      'sandbox-broker 1796197918 198.18.5.4 "" GET "/x" 404 182 0 <NOSRV>',
    ].join("\n");
    expect(parseBrokerLog(text)).toEqual([
      {
        time: 1796197917,
        client: "198.18.5.4",
        route: "gh",
        method: "GET",
        path: "/gh/user",
        status: 200,
        bytes: 171,
        ms: 2,
        refused: false,
      },
      {
        time: 1796197918,
        client: "198.18.5.4",
        route: "-",
        method: "GET",
        path: "/x",
        status: 404,
        bytes: 182,
        ms: 0,
        refused: true,
      },
    ]);
  });
});
