/**
 * The proxy's Squid configuration read as Squid reads it (Squid 5/6 `src/cache_cf.cc` parseOneConfigFile and
 * `src/ConfigParser.cc` TokenParse), and its allowlist judged. Squid reads the file a piece of at most 8,191 bytes at
 * a time (`fgets` into a BUFSIZ buffer), ends a line at its first `\r`, strips the leading white space, skips lines
 * that then start with `#` or are empty (also between continued lines), joins a line ending in `\` with the next one
 * (the `\` dropped, nothing put in its place; a continuation pending at the end of the file is dropped), trims the
 * trailing white space, expands `${service_name}`, `${process_name}` and `${process_number}`, then evaluates
 * `if`/`else`/`endif`, expands `include <glob>...` and parses the directive. A directive's words are separated by
 * spaces, tabs, CRs and LFs (w_space; a vertical tab or form feed is part of a word) and end at a word that starts
 * with `#`; a word that starts with a quote names a file the values are read from (or is a quoted value under
 * `configuration_includes_quoted_values on`, which also reads `parameters("file")`). What the reader cannot
 * evaluate from the text alone (includes, conditionals, macros, values from files, a line Squid would cut in
 * pieces) is refused with the line, never guessed at.
 */

import { REFUSED_DESTINATIONS } from "../../components/model/egress";
import { type AddressSpan, keptSpans, uncovered } from "./squid-addresses";

/** The most bytes of one line Squid reads at once (BUFSIZ - 1); a longer line is read as several. */
const LINE_BYTES = 8191;
/** The macros Squid substitutes in every line before it parses it. */
const MACROS = ["service_name", "process_name", "process_number"].map((name) => `\${${name}}`);
/** xisspace: what Squid's skip_ws and trim_trailing_ws take for white space. */
const SPACE = /[ \t\n\v\f\r]/;
const LEADING = /^[ \t\n\v\f\r]+/;
const TRAILING = /[ \t\n\v\f\r]+$/;
/** w_space (compat_shared.h), what separates a directive's words: a vertical tab or form feed is part of a word. */
const W_SPACE = /[ \t\n\r]+/;

/** One directive as Squid parses it: its words (without a trailing comment) and the joined line, for messages. */
export interface SquidDirective {
  readonly words: readonly string[];
  readonly line: string;
}

/** A configuration read, or why it cannot be judged. */
export type SquidRead = { readonly directives: readonly SquidDirective[] } | { readonly problem: string };

/** `line` starts with `word`, followed by white space or nothing (FindStatement). */
function statement(line: string, word: string): boolean {
  return line.startsWith(word) && (line.length === word.length || SPACE.test(line[word.length] ?? ""));
}

/** Why a joined line cannot be judged from the text alone, or undefined. */
function unjudgeable(line: string, words: readonly string[]): string | undefined {
  const macro = MACROS.find((m) => line.includes(m));
  if (macro !== undefined)
    return `\`${line}\` uses the macro ${macro}, which Squid fills in at start-up; write the value itself`;
  if (statement(line, "if") || statement(line, "else") || statement(line, "endif"))
    return `\`${line}\` is a conditional (if/else/endif), which Squid evaluates at start-up; write only the lines that apply`;
  if (statement(line, "include"))
    return `\`${line}\` includes other files, which are not in the input; put their lines in squid.conf itself`;
  const [directive] = words;
  if (directive === "configuration_includes_quoted_values" && words[1] !== "off")
    return `\`${line}\` changes how every later line is read (quoted values and parameters("file")); leave it off`;
  if (directive === "acl" || directive === "http_access") {
    const quoted = words.find((w) => w.startsWith('"') || w.startsWith("'") || w.includes("parameters("));
    if (quoted !== undefined)
      return `\`${line}\` takes values from a file (${quoted}), which is not in the input; write the values on the line`;
  }
  return undefined;
}

/** Reads a Squid configuration into its directives, as Squid joins and splits its lines. */
export function readSquidConfig(text: string): SquidRead {
  const directives: SquidDirective[] = [];
  const encoder = new TextEncoder();
  let pending = "";
  for (const physical of text.split("\n")) {
    if (physical.includes("\0")) return { problem: "a line holds a NUL byte, where Squid stops reading it" };
    if (encoder.encode(physical).length >= LINE_BYTES)
      return {
        problem: `a line of ${encoder.encode(physical).length} bytes, which Squid reads as several lines (at most ${LINE_BYTES - 1} bytes each)`,
      };
    const cr = physical.indexOf("\r");
    const line = (cr < 0 ? physical : physical.slice(0, cr)).replace(LEADING, "");
    if (line === "" || line.startsWith("#")) continue;
    pending += line;
    if (pending.endsWith("\\")) {
      pending = pending.slice(0, -1);
      continue;
    }
    const joined = pending.replace(TRAILING, "");
    pending = "";
    const words: string[] = [];
    for (const w of joined.split(W_SPACE)) {
      if (w.startsWith("#")) break;
      if (w !== "") words.push(w);
    }
    const problem = unjudgeable(joined, words);
    if (problem !== undefined) return { problem };
    directives.push({ words, line: joined });
  }
  return { directives };
}

/** The values of `acl <name> dstdomain` lines (options such as `-n` left out). */
function dstdomains(directives: readonly SquidDirective[]): string[] {
  return directives
    .filter((d) => d.words[0] === "acl" && d.words[2] === "dstdomain")
    .flatMap((d) => d.words.slice(3).filter((w) => !w.startsWith("-")));
}

/** The allowlist entries of a Squid configuration (`dstdomain` values); empty when it cannot be read. */
export function squidAllowlist(config: string): string[] {
  const read = readSquidConfig(config);
  return "problem" in read ? [] : dstdomains(read.directives);
}

/** The ACL flags Squid reads before an ACL's values (ACLFlags: `-x` words, up to `--`), and the values. */
function aclParts(words: readonly string[]): { flags: string[]; values: string[] } {
  const rest = words.slice(3);
  const flags: string[] = [];
  let i = 0;
  for (; i < rest.length && (rest[i] ?? "").startsWith("-"); i++) {
    if (rest[i] === "--") {
      i++;
      break;
    }
    flags.push(rest[i] ?? "");
  }
  return { flags, values: rest.slice(i) };
}

/** A directive Squid acts on in a way the allowlist cannot judge: its names (every NAME alias of src/cf.data.pre) and why. */
interface Refusal {
  readonly names: readonly string[];
  /** Only lines whose words this holds for (every line when absent). */
  readonly when?: (words: readonly string[]) => boolean;
  readonly why: string;
  /** What to write instead, when there is something. */
  readonly fix?: string;
}

/** A log destination that sends its lines to a host (`tcp:`/`udp:` of src/log/File.cc logfileOpen). */
const remoteLog = (words: readonly string[]): boolean => /^(tcp|udp):/.test(words[1] ?? "");

/**
 * Directives whose value names a program Squid runs, a module it loads or a file it executes (Squid 5-7
 * src/cf.data.pre, with every alias cf_gen accepts; the callers of ipcCreate, popen, system and dlopen): what they
 * start would run inside the proxy with its open egress.
 */
const RUNS_CODE: readonly Refusal[] = [
  {
    names: ["auth_param"],
    when: (w) => w[2] === "program",
    why: "starts the authentication helper it names",
  },
  { names: ["external_acl_type"], why: "starts the external ACL helper it names" },
  { names: ["url_rewrite_program", "redirect_program"], why: "starts the URL rewriter it names" },
  { names: ["store_id_program", "storeurl_rewrite_program"], why: "starts the Store-ID helper it names" },
  { names: ["sslcrtd_program"], why: "starts the certificate generator it names" },
  { names: ["sslcrtvalidator_program"], why: "starts the certificate validator it names" },
  {
    names: ["sslpassword_program"],
    why: "runs the program it names through a shell (popen) to read a key's passphrase",
  },
  {
    names: ["logfile_daemon"],
    why: "replaces the log-writing daemon Squid starts with the program it names",
  },
  { names: ["unlinkd_program"], why: "replaces the unlinkd helper Squid starts with the program it names" },
  { names: ["diskd_program"], why: "replaces the diskd helper Squid starts with the program it names" },
  { names: ["pinger_program"], why: "replaces the ICMP pinger Squid starts with the program it names" },
  { names: ["mail_program"], why: "names the command Squid runs through a shell (system) when it dies" },
  {
    names: ["cache_mgr"],
    when: (w) => !/^[A-Za-z0-9][A-Za-z0-9@._+-]*$/.test(w[1] ?? ""),
    why: "is written into the shell command Squid runs when it dies (`<mail_program> <cache_mgr> < <file>`)",
    fix: "write a plain e-mail address",
  },
  { names: ["loadable_modules"], why: "loads the shared library it names into Squid" },
  { names: ["ssl_engine"], why: "loads the OpenSSL engine it names (a shared library) into Squid" },
  {
    names: ["ecap_service"],
    why: "loads an eCAP adapter into Squid, which sees every request and may rewrite it after http_access",
  },
];

/**
 * Directives that send requests, or what requests hold, to a place the configuration chooses instead of the
 * request's own destination, which the refused-destination deny judges (src/cf.data.pre; src/log/File.cc for the
 * log modules), or that decide where an allowed name goes.
 */
const SENDS_ELSEWHERE: readonly Refusal[] = [
  {
    names: ["cache_peer"],
    why: "forwards requests to the peer it names (with `never_direct`, every allowed request): the allowlist and the refused-destination deny judge a request's host, never the peer's address or what the peer reaches",
    fix: "a corporate upstream proxy is a legitimate use: exempt this resource from sandbox-require-proxy-only-egress with its reason",
  },
  {
    names: ["icap_service"],
    why: "sends requests to the ICAP server it names, which the allowlist does not judge and which may rewrite a request after http_access judged it (adapted_http_access allows all when unset)",
  },
  {
    names: ["access_log", "cache_access_log", "icap_log", "cache_store_log", "netdb_filename", "tls_key_log"],
    when: remoteLog,
    why: "sends its log lines (the requests' URLs and what the log format names, or TLS keys) to the host it names, which the allowlist does not judge",
    fix: "log to stdio:, daemon: or syslog:",
  },
  {
    names: ["mcast_miss_addr"],
    why: "sends the URL of every cache miss to the multicast address it names, which the allowlist does not judge",
  },
  {
    names: ["dns_nameservers"],
    why: "makes Squid resolve names through the servers it names, whose answers decide where an allowed name goes (the refused-destination deny judges only private addresses)",
    fix: "leave it unset (Squid then uses the resolv.conf the platform gives the proxy)",
  },
  {
    names: ["hosts_file"],
    when: (w) => w[1] !== "/etc/hosts" && w[1] !== "none",
    why: "makes Squid resolve names from the file it names, which decides where an allowed name goes (the refused-destination deny judges only private addresses)",
    fix: "leave it unset (/etc/hosts)",
  },
];

/** Why a directive cannot be allowed in the proxy's configuration, or undefined. */
function refusedDirective(d: SquidDirective): string | undefined {
  const hit = (r: Refusal) => r.names.includes(d.words[0] ?? "") && (r.when === undefined || r.when(d.words));
  const fix = (r: Refusal) => (r.fix === undefined ? "" : `; ${r.fix}`);
  const runs = RUNS_CODE.find(hit);
  if (runs !== undefined)
    return `\`${d.line}\` ${runs.why}, which would run inside the proxy with its open egress (the proxy runs Squid alone)${fix(runs)}`;
  const sends = SENDS_ELSEWHERE.find(hit);
  return sends === undefined ? undefined : `\`${d.line}\` ${sends.why}${fix(sends)}`;
}

/** An ACL name as Squid looks it up: without regard to ASCII case (src/acl/Acl.cc). */
function aclKey(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Squid's predefined ACLs (the `acl` DEFAULT lines of src/cf.data.pre), which the configuration's lines extend. */
const BUILT_IN: readonly (readonly string[])[] = [
  ["acl", "all", "src", "all"],
  ["acl", "manager", "url_regex", "+i", "^[^:]+://[^/]+/squid-internal-mgr/"],
  ["acl", "localhost", "src", "127.0.0.1/32", "::1"],
  ["acl", "to_localhost", "dst", "127.0.0.0/8", "0.0.0.0/32", "::1/128", "::/128"],
  ["acl", "to_linklocal", "dst", "169.254.0.0/16", "fe80::/10"],
  ["acl", "CONNECT", "method", "CONNECT"],
];

/** The destinations the project's generated configuration refuses before its first allow (REFUSED_DESTINATIONS). */
const REFUSED = REFUSED_DESTINATIONS as readonly string[];

/**
 * What is wrong with a proxy's allowlist, judged as Squid evaluates `http_access` (Squid's `http_access` docs and
 * Checklist: the first line whose ACLs all match decides; a request no line matches gets the opposite of the last
 * line's action): a configuration that cannot be read as Squid reads it; a directive that runs a program or loads
 * code ({@link RUNS_CODE}) or sends requests elsewhere ({@link SENDS_ELSEWHERE}); a last line that denies some
 * requests only (an unmatched request would then be allowed: the last line must be `http_access deny all`, or an
 * allow); an allow line that no host ACL limits (`allow all`, `allow localnet`, `allow localnet manager`: the
 * built-in `manager` also matches `http://<any host>/squid-internal-mgr/...`, which Squid forwards to that host); a
 * host ACL of an allow line without `-n` (without it Squid matches a request for an IP address by the address's
 * reverse-DNS name, which the address's owner picks); an allow line before the refused destinations (the private,
 * link-local and metadata ranges) are denied: the `dst` ACLs of unconditional `http_access deny <acl>` lines before
 * it must together cover every refused range (squid-addresses.ts); an empty allowlist, a wildcard, or a whole
 * top-level domain (`.com`). ACL names are compared without regard to case and Squid's predefined ACLs are
 * included, as Squid looks them up. An allow line limited to the built-in `localhost` (`src 127.0.0.1/32 ::1`, not
 * extended by the configuration) lets only the proxy's own network namespace through, where Squid runs alone, so no
 * task: it is no allowlist line, unless Squid takes a client's address from what the client sends
 * (`follow_x_forwarded_for` or `proxy_protocol_access` allow lines).
 */
export function allowlistProblem(config: string): string | undefined {
  const read = readSquidConfig(config);
  if ("problem" in read) return `its configuration cannot be judged as Squid reads it: ${read.problem}`;
  for (const d of read.directives) {
    const why = refusedDirective(d);
    if (why !== undefined) return why;
  }
  // Squid keeps an ACL's first type; a later line of another type is a configuration error, not an addition.
  const types = new Map<string, string>();
  const acls = new Map<string, { flags: string[]; values: string[] }[]>();
  for (const words of [...BUILT_IN, ...read.directives.map((d) => d.words)]) {
    const [directive, name, type] = words;
    if (directive !== "acl" || name === undefined || type === undefined) continue;
    const key = aclKey(name);
    if ((types.get(key) ?? type) !== type) continue;
    types.set(key, type);
    acls.set(key, [...(acls.get(key) ?? []), aclParts(words)]);
  }
  const wild = dstdomains(read.directives).find(
    (e) => ["*", ".", "all", "*.*"].includes(e) || /^\.?\*/.test(e),
  );
  if (wild !== undefined) return `its allowlist contains "${wild}" (every host)`;
  const access = read.directives.filter((d) => d.words[0] === "http_access");
  const last = access.at(-1);
  if (
    last !== undefined &&
    last.words[1] !== "allow" &&
    !(last.words.length === 3 && aclKey(last.words[2] ?? "") === "all")
  )
    return `its last http_access line \`${last.line}\` is a deny of some requests only: Squid answers a request no line matches with the opposite of the last line (allow); end the list with \`http_access deny all\``;
  // The built-in localhost matches the proxy's own network namespace only, unless the configuration extends it or
  // lets a client name its address (X-Forwarded-For, the PROXY protocol).
  const ownOnly =
    !read.directives.some((d) => d.words[0] === "acl" && aclKey(d.words[1] ?? "") === "localhost") &&
    !read.directives.some(
      (d) =>
        (d.words[0] === "follow_x_forwarded_for" || d.words[0] === "proxy_protocol_access") &&
        d.words[1] === "allow",
    );
  /** The addresses an unconditional `http_access deny <acl>` surely refuses (a dst ACL without flags). */
  const deniedSpans = (d: SquidDirective): AddressSpan[] => {
    if (d.words[1] !== "deny" || d.words.length !== 3) return [];
    const name = aclKey(d.words[2] ?? "");
    const defs = acls.get(name) ?? [];
    if (types.get(name) !== "dst" || defs.some((a) => a.flags.length > 0)) return [];
    return keptSpans(defs.flatMap((a) => a.values));
  };
  const denied: AddressSpan[] = [];
  for (const d of access) {
    if (d.words[1] !== "allow") {
      denied.push(...deniedSpans(d));
      continue;
    }
    const names = d.words.slice(2).map(aclKey);
    if (ownOnly && names.includes("localhost")) continue;
    if (names.length === 1 && names[0] === "all") return `it allows every request (\`${d.line}\`)`;
    const hosts = names.filter((a) => !a.startsWith("!") && types.get(a) === "dstdomain");
    if (hosts.length === 0 && names.includes("manager"))
      return `\`${d.line}\` is limited by no host ACL: the built-in manager ACL also matches \`http://<any host>/squid-internal-mgr/...\`, which Squid forwards to that host unless it is the proxy itself; limit the line to the proxy's own clients (\`localhost\`) or to a dstdomain ACL`;
    if (hosts.length === 0)
      return `it allows requests whatever host they name (\`${d.line}\`: no host ACL limits it)`;
    const loose = hosts.find((h) => (acls.get(h) ?? []).some((a) => !a.flags.includes("-n")));
    if (loose !== undefined)
      return `\`${d.line}\` allows by the dstdomain ACL ${loose} without -n: Squid then matches a request for an IP address by its reverse-DNS name, which the address's owner picks; write \`acl ${loose} dstdomain -n ...\``;
    // An entry of one label (`.com`, `io`) allows every host under a top-level domain (a deny list may name one).
    const tld = hosts
      .flatMap((h) => (acls.get(h) ?? []).flatMap((a) => a.values))
      .find((e) => !e.replace(/^\./, "").replace(/\.$/, "").includes("."));
    if (tld !== undefined)
      return `\`${d.line}\` allows "${tld}", a whole top-level domain (every host under it); name the hosts or domains themselves`;
    const gap = uncovered(denied, REFUSED);
    if (gap !== undefined)
      return `\`${d.line}\` comes before ${gap} is refused: the dst ACLs of the unconditional \`http_access deny <acl>\` lines before the first allow must together cover ${REFUSED.join(" ")} (the private, link-local and metadata destinations a name may resolve to); deny them before the first allow`;
  }
  return dstdomains(read.directives).length === 0 ? "its allowlist is empty" : undefined;
}
