/**
 * The secrets broker's HAProxy configuration, generated from the routes (see `broker.ts`), and the reading of the
 * line it logs for each call. The configuration holds no credential: each route's header or query value names the
 * broker's variable (`"${SANDBOX_BROKER_CRED_<ROUTE>}"`), which HAProxy reads from its environment when it starts.
 */
import { type BrokerRoute, credentialVariable, parseUpstream, pathPatternRegex } from "./broker";
import { REFUSED_DESTINATIONS } from "./egress";

/** One template as the broker serves it: its own port and the routes its tasks may call. */
export interface BrokerListener {
  readonly template: string;
  readonly port: number;
  readonly routes: readonly string[];
}

/** The image's Lua task that says "sandbox-broker: ready" on stderr once HAProxy serves. */
export const BROKER_READY_LUA = "/usr/local/share/sandbox-broker/ready.lua";

/** Where the broker's image keeps Mozilla's CA bundle (verified TLS to every https upstream). */
export const BROKER_CA_FILE = "/etc/ssl/certs/ca-certificates.crt";

/**
 * Request paths refused before any route is judged, whatever the patterns say: encoded slashes, backslashes, dots
 * and percent signs (an upstream that decodes them would see another path than the one judged), control bytes,
 * empty segments, and dot segments (also with `;` parameters, which some servers strip before resolving them).
 */
export const UNSAFE_PATH = "(?i)%(?:2e|2f|5c|25|[01][0-9a-f]|7f)|\\\\|//|/\\.\\.?(?:[/;]|$)";

/** Request headers removed before the credential is added: a task never sends credentials of its own upstream. */
export const DROPPED_REQUEST_HEADERS = [
  "Authorization",
  "Proxy-Authorization",
  "Cookie",
  "Forwarded",
] as const;

/** Response headers removed before the answer reaches the task: they can carry credentials or sessions. */
export const DROPPED_RESPONSE_HEADERS = [
  "Set-Cookie",
  "Set-Cookie2",
  "Authorization",
  "Proxy-Authorization",
  "Authentication-Info",
  "Proxy-Authentication-Info",
] as const;

/** The statuses the broker answers with itself, and why (the log shows them with the route). */
export const BROKER_REFUSALS = {
  400: "the request's path or query is not one the broker forwards (encoded or dot segments, a credential of its own)",
  403: "the path is outside the route, or the upstream resolved to a refused address",
  404: "no such route for this template",
  405: "the method is not allowed on the route",
  429: "the route's rate limit",
  502: "the upstream did not resolve or answer, or its response was above the route's size cap",
} as const;

const q = (s: string) => `'${s}'`;

function routeBackend(name: string, route: BrokerRoute): string[] {
  const up = parseUpstream(route.upstream);
  const hostHeader =
    (up.scheme === "https" && up.port === 443) || (up.scheme === "http" && up.port === 80)
      ? up.host
      : `${up.host}:${up.port}`;
  const variable = credentialVariable(name);
  const value = `${route.credential.prefix}\${${variable}}`;
  const lines = [
    `backend route_${name}`,
    `  http-request deny deny_status 405 unless { method ${route.methods.join(" ")} }`,
    "  http-request set-var(txn.rest) path,regsub(^/[^/]*,)",
    "  http-request set-var(txn.rest) str(/) if { var(txn.rest) -m len 0 }",
    `  http-request deny deny_status 403 unless { var(txn.rest) -m reg ${route.paths.map((p) => q(pathPatternRegex(p))).join(" ")} }`,
  ];
  if (route.rateLimit !== undefined) {
    const per = route.rateLimit.perSeconds;
    lines.push(
      `  stick-table type integer size 1 expire ${per}s store http_req_rate(${per}s)`,
      "  http-request track-sc0 int(0)",
      `  http-request deny deny_status 429 if { sc_http_req_rate(0) gt ${route.rateLimit.requests} }`,
    );
  }
  const dropped = new Set<string>(DROPPED_REQUEST_HEADERS);
  if (route.credential.query === undefined) dropped.add(route.credential.header ?? "Authorization");
  for (const h of [...dropped].sort()) lines.push(`  http-request del-header ${h}`);
  if (route.credential.query === undefined) {
    lines.push(`  http-request set-header ${route.credential.header ?? "Authorization"} "${value}"`);
  } else {
    const param = route.credential.query;
    const esc = param.replace(/[.-]/g, (c) => `\\${c}`);
    lines.push(
      // A task's own value for the parameter, in any spelling the upstream may decode to it, is refused.
      `  http-request deny deny_status 400 if { query,url_dec -m reg -i ${q(`(?:^|&)${esc}(?:[=&]|$)`)} }`,
      `  http-request set-query "${param}=${value}" if !{ query -m found } || { query -m len 0 }`,
      `  http-request set-query "%[query]&${param}=${value}" if { query -m found } !{ query -m len 0 }`,
    );
  }
  lines.push(
    `  http-request set-path "${up.basePath}%[var(txn.rest)]"`,
    `  http-request set-header Host ${hostHeader}`,
    // The upstream's address is judged after resolution and the connection goes to exactly that address.
    `  http-request do-resolve(txn.dst,sandbox,ipv4) str(${up.host})`,
    "  http-request deny deny_status 502 unless { var(txn.dst) -m found }",
    `  http-request deny deny_status 403 if { var(txn.dst) -m ip ${REFUSED_DESTINATIONS.join(" ")} }`,
    "  http-request set-dst var(txn.dst)",
  );
  for (const h of DROPPED_RESPONSE_HEADERS) lines.push(`  http-response del-header ${h}`);
  if (
    route.credential.header !== undefined &&
    !(DROPPED_RESPONSE_HEADERS as readonly string[]).includes(route.credential.header)
  ) {
    lines.push(`  http-response del-header ${route.credential.header}`);
  }
  if (route.maxResponseBytes !== undefined) {
    lines.push(
      `  http-response deny deny_status 502 if { res.hdr(content-length) -m int gt ${route.maxResponseBytes} }`,
      "  http-response deny deny_status 502 if !{ res.hdr(content-length) -m found } !{ status 204 304 }",
    );
  }
  const tls =
    up.scheme === "https"
      ? ` ssl verify required ca-file ${BROKER_CA_FILE} sni str(${up.host}) verifyhost ${up.host}`
      : "";
  lines.push(`  server upstream 0.0.0.0:${up.port}${tls}`);
  return lines;
}

/**
 * The broker's HAProxy configuration: one frontend per template (its port admits only its routes), one backend per
 * route. No stats page, no admin socket, no connection reuse across calls, a log line per call on stdout.
 */
export function haproxyConfig(
  listeners: readonly BrokerListener[],
  routes: Readonly<Record<string, BrokerRoute>>,
): string {
  const lines = [
    "# Generated by sandbox-projects: the secrets broker. Credentials arrive as variables, never in this file.",
    "global",
    "  log stdout format raw local0",
    "  maxconn 512",
    "  nbthread 1",
    "  hard-stop-after 5s",
    "  ssl-server-verify required",
    `  lua-load ${BROKER_READY_LUA}`,
    "",
    "resolvers sandbox",
    "  parse-resolv-conf",
    "  resolve_retries 2",
    "  timeout resolve 1s",
    "  timeout retry 1s",
    "  hold valid 10s",
    "  hold nx 1s",
    "",
    "defaults",
    "  mode http",
    "  log global",
    "  option dontlognull",
    "  http-reuse never",
    "  timeout connect 5s",
    "  timeout client 60s",
    "  timeout server 60s",
    "  timeout http-request 10s",
    '  log-format "sandbox-broker %Ts %ci %{+Q}[var(txn.route)] %HM %{+Q}[var(txn.logpath)] %ST %B %Ta %s"',
    "",
  ];
  for (const l of listeners) {
    const own = [...l.routes].sort();
    lines.push(
      `frontend via_${l.template}`,
      `  bind :${l.port}`,
      "  http-request set-var(txn.logpath) path",
      "  http-request set-var(txn.route) path,field(2,/)",
      "  http-request deny deny_status 400 unless { url -m beg / }",
      `  http-request deny deny_status 400 if { path -m reg ${q(UNSAFE_PATH)} }`,
      `  http-request deny deny_status 404 unless { var(txn.route) -m str ${own.join(" ")} }`,
      ...own.map((r) => `  use_backend route_${r} if { var(txn.route) -m str ${r} }`),
      "",
    );
  }
  const used = [...new Set(listeners.flatMap((l) => l.routes))].sort();
  for (const r of used) {
    const route = routes[r];
    if (route !== undefined) lines.push(...routeBackend(r, route), "");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/**
 * A credential as the broker's variable holds it. HAProxy reads the variable into a log-format string, where `%`
 * starts an expression: it is doubled. Control characters (a header split), quotes and backslashes are refused;
 * the message never shows the value.
 */
export function brokerCredentialValue(raw: string): { value: string } | { problem: string } {
  if (raw.length === 0) return { problem: "is empty" };
  if (raw.length > 8192) return { problem: "is longer than 8192 characters" };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f-\uffff"\\]/.test(raw)) {
    return {
      problem:
        "holds a character the broker cannot send in a header or query (a control or non-ASCII character, a quote or a backslash)",
    };
  }
  return { value: raw.replace(/%/g, "%%") };
}

/** One call the broker logged. */
export interface BrokerCall {
  /** Unix seconds. */
  readonly time: number;
  readonly client: string;
  /** The route asked for (`-` when the path named none). */
  readonly route: string;
  readonly method: string;
  /** The path the task asked for (never the query, which may carry a route's credential). */
  readonly path: string;
  readonly status: number;
  readonly bytes: number;
  readonly ms: number;
  /** True when the broker answered itself (a wall refused the call) rather than the upstream. */
  readonly refused: boolean;
}

const CALL = /^sandbox-broker (\d+) (\S+) "([^"]*)" (\S+) "([^"]*)" (\d+) (\d+) (-?\d+)(?: (\S+))?$/;

/** The server HAProxy logs for a call no server took: one of the broker's own refusals. */
const NO_SERVER = "<NOSRV>";

/** The calls in the broker's log (other lines, such as HAProxy's notices, are skipped). */
export function parseBrokerLog(text: string): BrokerCall[] {
  const calls: BrokerCall[] = [];
  for (const line of text.split("\n")) {
    const m = CALL.exec(line.trim());
    if (m === null) continue;
    calls.push({
      time: Number(m[1]),
      client: m[2] ?? "",
      route: m[3] === "" ? "-" : (m[3] ?? "-"),
      method: m[4] ?? "",
      path: m[5] ?? "",
      status: Number(m[6]),
      bytes: Number(m[7]),
      ms: Number(m[8]),
      // A call the log names no server for was refused by the broker; older lines without the field count as refused.
      refused: m[9] === undefined || m[9] === NO_SERVER,
    });
  }
  return calls;
}
