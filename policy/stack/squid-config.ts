/**
 * The proxy's Squid configuration read as Squid reads it (Squid 5/6 `src/cache_cf.cc` parseOneConfigFile and
 * `src/ConfigParser.cc` TokenParse), and its allowlist judged. Squid reads the file a piece of at most 8,191 bytes at
 * a time (`fgets` into a BUFSIZ buffer), ends a line at its first `\r`, strips the leading white space, skips lines
 * that then start with `#` or are empty (also between continued lines), joins a line ending in `\` with the next one
 * (the `\` dropped, nothing put in its place; a continuation pending at the end of the file is dropped), trims the
 * trailing white space, expands `${service_name}`, `${process_name}` and `${process_number}`, then evaluates
 * `if`/`else`/`endif`, expands `include <glob>...` and parses the directive. A directive's words are separated by
 * white space and end at a word that starts with `#`; a word that starts with a quote names a file the values are
 * read from (or is a quoted value under `configuration_includes_quoted_values on`, which also reads
 * `parameters("file")`). What the reader cannot evaluate from the text alone (includes, conditionals, macros, values
 * from files, a line Squid would cut in pieces) is refused with the line, never guessed at.
 */

import { REFUSED_DESTINATIONS } from "../../components/model/egress";

/** The most bytes of one line Squid reads at once (BUFSIZ - 1); a longer line is read as several. */
const LINE_BYTES = 8191;
/** The macros Squid substitutes in every line before it parses it. */
const MACROS = ["service_name", "process_name", "process_number"].map((name) => `\${${name}}`);
/** xisspace: what Squid's skip_ws and trim_trailing_ws take for white space. */
const SPACE = /[ \t\n\v\f\r]/;
const LEADING = /^[ \t\n\v\f\r]+/;
const TRAILING = /[ \t\n\v\f\r]+$/;

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
    for (const w of joined.split(/[ \t\n\v\f\r]+/)) {
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

/**
 * Directives that make Squid start a program or load code inside the proxy, which would run with the proxy's open
 * egress (Squid's helpers: cf.data.pre): a helper program, a module to load, a different program for a built-in
 * helper. `auth_param` only with its `program` parameter.
 */
const RUNS_CODE = [
  "external_acl_type",
  "url_rewrite_program",
  "store_id_program",
  "logfile_daemon",
  "sslcrtd_program",
  "sslcrtvalidator_program",
  "unlinkd_program",
  "diskd_program",
  "pinger_program",
  "loadable_modules",
  "ecap_service",
];

/** The destinations the project's generated configuration refuses before its first allow (REFUSED_DESTINATIONS). */
const REFUSED = REFUSED_DESTINATIONS as readonly string[];

/**
 * What is wrong with a proxy's allowlist, judged as Squid evaluates `http_access` (Squid's `http_access` docs and
 * Checklist: the first line whose ACLs all match decides; a request no line matches gets the opposite of the last
 * line's action): a configuration that cannot be read as Squid reads it; a last line that denies some requests only
 * (an unmatched request would then be allowed: the last line must be `http_access deny all`, or an allow); an allow
 * line that no host ACL limits (`allow all`, `allow localnet`); a host ACL of an allow line without `-n` (without it
 * Squid matches a request for an IP address by the address's reverse-DNS name, which the address's owner picks); no
 * `http_access deny` of the private, link-local and metadata destinations (a `dst` ACL of every range the toolkit
 * refuses) before the first allow; an empty allowlist, a wildcard, or a whole top-level domain (`.com`); a
 * `cache_peer` (the admitted requests would go to the peer's address, not the hosts they name).
 */
export function allowlistProblem(config: string): string | undefined {
  const read = readSquidConfig(config);
  if ("problem" in read) return `its configuration cannot be judged as Squid reads it: ${read.problem}`;
  const runs = read.directives.find(
    (d) => RUNS_CODE.includes(d.words[0] ?? "") || (d.words[0] === "auth_param" && d.words[2] === "program"),
  );
  if (runs !== undefined)
    return `\`${runs.line}\` makes Squid start a program or load code inside the proxy, which would run with its open egress; the proxy runs Squid alone`;
  // A peer receives the requests the allowlist admits, whatever host they name (the generator writes none).
  const peer = read.directives.find((d) => d.words[0] === "cache_peer");
  if (peer !== undefined)
    return `\`${peer.line}\` sends requests to a peer of its own (${JSON.stringify(peer.words[1] ?? "")}) instead of the hosts they name; the proxy connects only to the hosts it allows (no cache_peer)`;
  const types = new Map<string, string>();
  const acls = new Map<string, { flags: string[]; values: string[] }[]>();
  for (const d of read.directives) {
    const [directive, name, type] = d.words;
    if (directive !== "acl" || name === undefined || type === undefined) continue;
    types.set(name, type);
    acls.set(name, [...(acls.get(name) ?? []), aclParts(d.words)]);
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
    !(last.words.length === 3 && last.words[2] === "all")
  )
    return `its last http_access line \`${last.line}\` is a deny of some requests only: Squid answers a request no line matches with the opposite of the last line (allow); end the list with \`http_access deny all\``;
  const refusing = (d: SquidDirective): boolean => {
    if (d.words[1] !== "deny" || d.words.length !== 3) return false;
    const name = d.words[2] ?? "";
    const defs = acls.get(name) ?? [];
    const values = defs.flatMap((a) => a.values);
    return (
      types.get(name) === "dst" &&
      defs.every((a) => a.flags.length === 0) &&
      REFUSED.every((r) => values.includes(r))
    );
  };
  let refused = false;
  for (const d of access) {
    if (d.words[1] !== "allow") {
      refused ||= refusing(d);
      continue;
    }
    const names = d.words.slice(2);
    if (names.length === 1 && names[0] === "all") return `it allows every request (\`${d.line}\`)`;
    const hosts = names.filter((a) => !a.startsWith("!") && types.get(a) === "dstdomain");
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
    if (!refused)
      return `\`${d.line}\` comes before any \`http_access deny <acl>\` of a dst ACL listing ${REFUSED.join(" ")} (the private, link-local and metadata destinations a name may resolve to); deny them before the first allow`;
  }
  return dstdomains(read.directives).length === 0 ? "its allowlist is empty" : undefined;
}
