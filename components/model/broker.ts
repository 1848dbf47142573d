/**
 * The secrets broker's routes: the keyed upstreams a project's tasks may call without ever holding the key. A task
 * asks `http://<project>-broker:<port>/<route>/<path>`; the broker checks the method and the path against the route,
 * adds the credential, resolves the upstream and refuses private ranges and the metadata address, and returns the
 * answer without credential-bearing headers. The credential comes from a Pulumi secret config key, never a literal.
 * The broker's HAProxy configuration is generated in `haproxy.ts`; what a backend runs is decided in `broker-spec.ts`.
 */
import { z } from "zod";
import { REDACT, strictObject } from "./errors";

const HOST_LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const UPSTREAM = new RegExp(
  `^(https?)://((?:${HOST_LABEL}\\.)+[a-z][a-z0-9-]{0,61}[a-z0-9])(?::([0-9]{1,5}))?((?:/[A-Za-z0-9._~!$&()*+,;=:@-]+)*)/?$`,
);

/** The methods a route may allow. */
export const BROKER_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type BrokerMethod = (typeof BROKER_METHODS)[number];

/** A path pattern's literal characters: RFC 3986 path characters without `%`, `'` and `\`. */
const PATTERN = /^(?:\/(?:\*\*|[A-Za-z0-9._~!$&()+,;=:@*-]+))+\/?$|^\/$/;

/** Request headers a route's credential may not be sent in: they frame the message or name its target. */
const FRAMING_HEADERS = [
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "trailer",
];

/** What a config key that names a credential looks like: `key` (in the project's namespace) or `namespace:key`. */
const CONFIG_KEY = /^(?:[A-Za-z][A-Za-z0-9_-]{0,63}:)?[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** The credential a route adds: where it comes from and how it is sent. */
export const BrokerCredentialSchema = strictObject({
  /**
   * The Pulumi config key holding the credential, set with `pulumi config set --secret <key> <value>`: `key` in the
   * project's namespace (`sandbox:key`) or `namespace:key`. Never the credential itself.
   */
  secret: z
    .string({ error: "secret must name a config key set with `pulumi config set --secret`" })
    .superRefine((s, ctx) => {
      if (!CONFIG_KEY.test(s)) {
        ctx.addIssue({
          code: "custom",
          params: REDACT,
          message:
            "must name a config key (letters, digits, _ and -, optionally namespace:key) set with `pulumi config set --secret`, never hold the credential itself (the value is not shown)",
        });
      }
    }),
  /** The request header that carries it. Defaults to `Authorization` unless `query` is given. */
  header: z
    .string({ error: "header must be an HTTP header name" })
    .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/, {
      error: "header must be an HTTP header name (letters, digits, -)",
    })
    .refine((h) => !FRAMING_HEADERS.includes(h.toLowerCase()), {
      error: `header may not be one that frames the request (${FRAMING_HEADERS.join(", ")})`,
    })
    .optional(),
  /** The query parameter that carries it instead of a header. */
  query: z
    .string({ error: "query must be a query parameter name" })
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, {
      error: "query must be a query parameter name (letters, digits, _ . -)",
    })
    .optional(),
  /** Text put before the credential, e.g. `Bearer ` or `token `. Defaults to none. */
  prefix: z
    .string({ error: 'prefix must be text such as "Bearer "' })
    .regex(/^[A-Za-z0-9 _.:=+/-]{0,32}$/, {
      error: "prefix may hold only letters, digits, space and _ . : = + / - (at most 32)",
    })
    .default(""),
}).superRefine((c, ctx) => {
  if (c.header !== undefined && c.query !== undefined) {
    ctx.addIssue({ code: "custom", path: ["query"], message: "give header or query, not both" });
  }
});
export type BrokerCredential = z.output<typeof BrokerCredentialSchema>;

/** One keyed upstream a task may call through the broker. */
export const BrokerRouteSchema = strictObject({
  /**
   * The upstream's base URL: `https://` or `http://`, a host name (never an IP address), an optional port and base
   * path. A task's `/<route>/<path>` goes to `<upstream><path>`.
   */
  upstream: z
    .string({ error: "upstream must be a URL such as https://api.example.com" })
    .superRefine((u, ctx) => {
      if (!UPSTREAM.test(u)) {
        ctx.addIssue({
          code: "custom",
          message:
            "must be http:// or https:// with a lower-case host name (no IP address, user, query or fragment), an optional port and base path",
        });
        return;
      }
      const port = UPSTREAM.exec(u)?.[3];
      if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
        ctx.addIssue({ code: "custom", message: "the port must be 1-65535" });
      }
    }),
  /** The methods allowed. Defaults to `[GET]`. */
  methods: z
    .array(z.enum(BROKER_METHODS, { error: `methods may be ${BROKER_METHODS.join(", ")}` }), {
      error: "methods must be a list such as [GET, POST]",
    })
    .min(1, { error: "at least one method is required" })
    .default(["GET"])
    .transform((m) => [...new Set(m)].sort()),
  /**
   * The paths allowed, relative to the upstream's base path: `/repos/acme/*` (`*` is any text within one segment),
   * `/packages/**` (`**`, a whole segment, is any number of segments), `/` (the base itself). At least one.
   */
  paths: z
    .array(
      z.string({ error: "a path pattern must be text such as /repos/*" }).superRefine((p, ctx) => {
        const segments = p.split("/").slice(1);
        if (!PATTERN.test(p) || segments.some((s) => s === "." || s === "..")) {
          ctx.addIssue({
            code: "custom",
            message:
              "a path pattern starts with /, holds path characters (no %, ', \\, . or .. segments), * within a segment or ** as a whole segment",
          });
        } else if (segments.some((s) => s.includes("**") && s !== "**")) {
          ctx.addIssue({ code: "custom", message: "** must be a whole segment, as in /a/**/b" });
        }
      }),
      { error: "paths must be a list of path patterns" },
    )
    .min(1, { error: "at least one path pattern is required (/** allows every path)" }),
  /** The credential the broker adds. */
  credential: BrokerCredentialSchema,
  /** At most `requests` calls every `perSeconds` seconds on this route (all tasks together). Defaults to none. */
  rateLimit: strictObject({
    requests: z.number({ error: "requests must be a whole number" }).int().min(1).max(1_000_000),
    perSeconds: z.number({ error: "perSeconds must be a whole number of seconds" }).int().min(1).max(86_400),
  }).optional(),
  /**
   * The largest response body returned, in bytes. A response above it, or one that does not declare its length,
   * is refused (502). Defaults to no cap.
   */
  maxResponseBytes: z
    .number({ error: "maxResponseBytes must be a whole number of bytes" })
    .int()
    .min(1)
    .max(2 ** 40)
    .optional(),
});
export type BrokerRoute = z.output<typeof BrokerRouteSchema>;

const ROUTE_NAME = /^[a-z](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

/** The broker of a project: its routes and the first of its ports. */
export const BrokerSchema = strictObject({
  /** The routes by name; a task calls `/<name>/<path>`. At least one. */
  routes: z
    .record(
      z.string().regex(ROUTE_NAME, {
        error:
          "route names are lower-case letters, digits and -, starting with a letter, at most 32 characters",
      }),
      BrokerRouteSchema,
      {
        error: (iss) =>
          iss.code === "invalid_type" ? "routes must be a mapping of route name to route" : undefined,
      },
    )
    .refine((r) => Object.keys(r).length > 0, { error: "a broker needs at least one route" }),
  /**
   * The port the first template that uses the broker reaches it on; the next templates (by name) get the next
   * ports, so that a task reaches only its own template's routes. Defaults to 8080.
   */
  port: z.number({ error: "port must be a whole number" }).int().min(1024).max(65535).default(8080),
});
export type Broker = z.output<typeof BrokerSchema>;

/** A route's upstream split into its parts. */
export interface Upstream {
  readonly scheme: "http" | "https";
  readonly host: string;
  readonly port: number;
  /** The base path without a trailing slash: "" for the root. */
  readonly basePath: string;
}

/** The parts of a checked upstream URL. */
export function parseUpstream(url: string): Upstream {
  const m = UPSTREAM.exec(url);
  if (m === null) throw new Error(`not an upstream URL: ${url}`);
  const scheme = m[1] === "http" ? "http" : "https";
  return {
    scheme,
    host: m[2] ?? "",
    port: m[3] === undefined ? (scheme === "https" ? 443 : 80) : Number(m[3]),
    basePath: m[4] ?? "",
  };
}

/** The config key a route's credential is read from, with the project's namespace filled in. */
export function credentialKey(credential: BrokerCredential, namespace: string): string {
  return credential.secret.includes(":") ? credential.secret : `${namespace}:${credential.secret}`;
}

/** The broker's variable that holds a route's credential (Docker: its environment; Kubernetes: a file so named). */
export function credentialVariable(route: string): string {
  return `SANDBOX_BROKER_CRED_${route.toUpperCase().replace(/-/g, "_")}`;
}

/** The variable a task finds its broker in: `http://<project>-broker:<port>` (tasks of templates that use it). */
export const BROKER_URL_ENV = "SANDBOX_BROKER_URL";

/**
 * A path pattern as an anchored regular expression over the request's path after the route: `*` is any run of
 * characters other than `/`, a `**` segment any number of whole segments (and, last, a trailing slash).
 */
export function pathPatternRegex(pattern: string): string {
  if (pattern === "/") return "^/$";
  const trailing = pattern.length > 1 && pattern.endsWith("/");
  const segments = pattern.replace(/\/$/, "").split("/").slice(1);
  const esc = (s: string) => s.replace(/[.+()$^|?[\]{}=!:-]/g, (c) => `\\${c}`);
  let out = "";
  for (const seg of segments) {
    if (seg === "**") out += "(?:/[^/]+)*";
    else out += `/${seg.split("*").map(esc).join("[^/]*")}`;
  }
  // A final `**` also takes a trailing slash (`/simple/pkg/`); otherwise the pattern says whether one is allowed.
  const end = segments[segments.length - 1] === "**" ? "/?" : trailing ? "/" : "";
  return `^${out}${end}$`;
}
