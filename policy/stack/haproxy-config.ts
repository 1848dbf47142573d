/**
 * The secrets broker's HAProxy configuration read as HAProxy reads it (`src/cfgparse.c` readcfgfile and
 * `src/tools.c` parse_line), and judged against what the toolkit's generator writes (components/model/haproxy.ts).
 * HAProxy reads a line up to its line feed (a `\r` also ends it), skips its leading white space, and splits it into
 * words at unquoted white space: `'...'` is literal, `"..."` expands environment variables (`$NAME`, `${NAME}`,
 * `${NAME-default}`, `${NAME[*]}`, which may even split into words), a backslash outside single quotes escapes the
 * next character (`\xHH` is a byte), and an unquoted `#` ends the line. A line whose first word is a section keyword
 * starts a section; `.if`/`.elif`/`.else`/`.endif` are evaluated at start-up. What the text alone cannot tell (a
 * conditional, a variable anywhere but a route's credential) is refused with its line, never guessed at.
 *
 * The judgement is the generator's shape, the smallest one that keeps the broker's egress to its routes: every
 * `server` is `0.0.0.0:<port>` (HAProxy then connects to the connection's destination address), which its backend
 * sets to the address its route's upstream resolved to: `http-request do-resolve(<var>,...) str(<host name>)`, then
 * `http-request set-dst var(<var>)` right after `http-request deny ... if { var(<var>) -m ip <every refused
 * destination> }`; nothing else sets that variable or the destination; nothing loads or runs code (Lua but the image's own ready task, external checks, programs, OpenSSL
 * engines and providers); nothing forwards where a request says (`option http_proxy`, `option transparent`,
 * `set-uri`, `set-dst-port`, a PROXY protocol header, a `dispatch` address); no log, peer, mail or ring traffic to an
 * address; no runtime API socket or stats admin (which change server addresses at run time), no server state file
 * (addresses loaded at start-up).
 */

import { BROKER_SECRETS_DIR } from "../../components/model/broker-spec";
import { REFUSED_DESTINATIONS } from "../../components/model/egress";
import { BROKER_READY_LUA } from "../../components/model/haproxy";

/** One line as HAProxy parses it: its words, the variables its words expand, and the line for messages. */
export interface HaproxyLine {
  readonly number: number;
  readonly words: readonly string[];
  /** The environment variables each word expands (empty for a literal word). */
  readonly variables: readonly (readonly string[])[];
  readonly text: string;
}

/** A line that could not be read, or the words of one line. */
type Parsed = { readonly problem: string } | { readonly words: string[]; readonly variables: string[][] };

const SPACE = /[ \t\n\v\f\r]/;

/** One physical line split into words as parse_line does for the configuration (env, quotes, backslash, `#`). */
function parseLine(line: string): Parsed {
  const words: string[] = [];
  const variables: string[][] = [];
  let word = "";
  let vars: string[] = [];
  let started = false;
  let squote = false;
  let dquote = false;
  const end = () => {
    if (started) {
      words.push(word);
      variables.push(vars);
    }
    word = "";
    vars = [];
    started = false;
  };
  let i = 0;
  while (i < line.length) {
    const c = line[i] ?? "";
    if (c === "\0" || c === "\n" || c === "\r") break;
    if (c === "#" && !squote && !dquote) break;
    if (c === '"' && !squote) {
      dquote = !dquote;
      started = true;
      i++;
    } else if (c === "'" && !dquote) {
      squote = !squote;
      started = true;
      i++;
    } else if (c === "\\" && !squote) {
      const n = line[i + 1] ?? "";
      if (n === "x") {
        const hex = line.slice(i + 2, i + 4);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) return { problem: "an incomplete \\x escape" };
        word += String.fromCharCode(Number.parseInt(hex, 16));
        i += 4;
      } else if (n === "r" || n === "n" || n === "t") {
        word += n === "r" ? "\r" : n === "n" ? "\n" : "\t";
        i += 2;
      } else if (["\\", " ", "#", '"', "'", "$"].includes(n)) {
        word += n;
        i += 2;
      } else {
        word += c;
        i++;
      }
      started = true;
    } else if (SPACE.test(c) && !squote && !dquote) {
      end();
      while (i < line.length && SPACE.test(line[i] ?? "")) i++;
    } else if (c === "$" && dquote) {
      // An environment variable: HAProxy reads it when it starts; its value is not in the input.
      const m = /^\$(\{)?(\.?[A-Za-z_][A-Za-z0-9_]*)(\[\*\])?(-[^}]*)?(\})?/.exec(line.slice(i));
      if (m === null || (m[1] === undefined) !== (m[5] === undefined))
        return { problem: "an environment variable HAProxy cannot read (a bad name or an unmatched brace)" };
      vars.push(m[2] ?? "");
      word += m[0];
      started = true;
      i += m[0].length;
    } else {
      word += c;
      started = true;
      i++;
    }
  }
  if (squote || dquote) return { problem: "an unmatched quote" };
  end();
  return { words, variables };
}

/** Section keywords (cfgparse's registered sections); a line that starts with one opens a section. */
const SECTIONS = [
  "global",
  "defaults",
  "frontend",
  "backend",
  "listen",
  "resolvers",
  "userlist",
  "cache",
  "http-errors",
  "fcgi-app",
  "crt-store",
  "traces",
  "program",
  "peers",
  "mailers",
  "ring",
  "log-forward",
  "namespace_list",
  "acme",
];
/** Sections that start programs or send traffic to addresses of their own. */
const REFUSED_SECTIONS: Readonly<Record<string, string>> = {
  program: "starts a program beside HAProxy (master-worker), with the broker's open egress",
  peers: "connects to peer addresses of its own (stick-table synchronization)",
  mailers: "sends mail to mail servers of its own",
  ring: "forwards logs (with request data) to servers of its own",
  "log-forward": "forwards logs to addresses of its own",
  namespace_list: "puts servers in other network namespaces",
  acme: "fetches certificates from an ACME server of its own",
};

/** A configuration read: its lines with the section each sits in, or why it cannot be judged. */
export type HaproxyRead =
  | { readonly sections: readonly { readonly kind: string; readonly lines: HaproxyLine[] }[] }
  | { readonly problem: string };

const quote = (l: { number: number; text: string }) => `line ${l.number} \`${l.text.trim()}\``;

/** Reads an HAProxy configuration into sections of parsed lines. */
export function readHaproxyConfig(text: string): HaproxyRead {
  const sections: { kind: string; lines: HaproxyLine[] }[] = [{ kind: "(before any section)", lines: [] }];
  const physical = text.split("\n");
  for (const [index, raw] of physical.entries()) {
    const number = index + 1;
    const line = raw.replace(/^[ \t\n\v\f\r]+/, "");
    if (line === "" || line.startsWith("[")) continue;
    const parsed = parseLine(line);
    if ("problem" in parsed) return { problem: `${quote({ number, text: raw })} holds ${parsed.problem}` };
    const { words, variables } = parsed;
    const [first] = words;
    if (first === undefined) continue;
    const l: HaproxyLine = { number, words, variables, text: raw };
    if (/^\.(if|elif|else|endif)$/.test(first))
      return {
        problem: `${quote(l)} is a conditional block, which HAProxy evaluates at start-up; write only the lines that apply`,
      };
    if (SECTIONS.includes(first)) sections.push({ kind: first, lines: [l] });
    else sections.at(-1)?.lines.push(l);
  }
  return { sections };
}

/** The refused destinations a broker's ip ACL must list (REFUSED_DESTINATIONS). */
const REFUSED = REFUSED_DESTINATIONS as readonly string[];
/** Where a `log` line may send: HAProxy's own outputs, never an address or socket. */
const LOG_TARGETS = ["global", "stdout", "stderr", "fd@1", "fd@2"];
/** Global keywords that load or run code inside the broker, which would run with its open egress and credentials. */
const CODE_KEYWORDS: Readonly<Record<string, string>> = {
  "lua-load-per-thread": "loads Lua code",
  "lua-prepend-path": "adds where Lua code is loaded from",
  "external-check": "lets HAProxy run programs as health checks",
  "insecure-fork-wanted": "lets HAProxy start programs",
  "insecure-setuid-wanted": "lets HAProxy start privileged programs",
  "ssl-engine": "loads an OpenSSL engine (code)",
  "ssl-provider": "loads an OpenSSL provider (code)",
  "ssl-provider-path": "sets where OpenSSL providers (code) are loaded from",
  setenv: "changes the variables later lines read",
  presetenv: "changes the variables later lines read",
  resetenv: "changes the variables later lines read",
  unsetenv: "changes the variables later lines read",
};
/** Server options that send a server's traffic, or its checks, to another address. */
const SERVER_ADDRESS_OPTIONS = ["addr", "agent-addr", "socks4", "check-via-socks4", "namespace"];
/** The generator's one place for a variable: a route's credential in a header or query value. */
const CREDENTIAL_VARIABLE = /^SANDBOX_BROKER_CRED_[A-Z0-9_]+$/;

/**
 * A variable's name as an argument spells it, without the quotes and white space HAProxy's argument parser drops
 * (`'txn.dst'`, `txn.dst `); a backslash is kept, and a name with one is never the name it may stand for.
 */
function varName(arg: string): string {
  return arg.replace(/['"\s]/g, "");
}

/** Why one line, wherever it sits, is not a broker line; undefined when it may be. */
function lineProblem(l: HaproxyLine, kind: string, dst: string | undefined): string | undefined {
  const [kw = "", a1 = "", a2 = ""] = l.words;
  const at = quote(l);
  const credential =
    kw === "http-request" &&
    (a1 === "set-header" || a1 === "add-header" || a1 === "set-query") &&
    l.variables.every(
      (vs, i) =>
        vs.length === 0 ||
        (i === (a1 === "set-query" ? 2 : 3) && vs.every((v) => CREDENTIAL_VARIABLE.test(v))),
    );
  const variable = l.variables.flat()[0];
  if (variable !== undefined && !credential)
    return `${at} uses the environment variable ${variable}, which HAProxy fills in at start-up (its value is not in the input); only a route's credential value may name one (SANDBOX_BROKER_CRED_<ROUTE>)`;
  // The credentials reach HAProxy as variables; a file of their folder put in an error page, a response or a map
  // would hand them to whoever gets it.
  const secrets = l.words.find((w) => w.includes(BROKER_SECRETS_DIR));
  if (secrets !== undefined)
    return `${at} reads ${JSON.stringify(secrets)}, in the broker's credentials folder ${BROKER_SECRETS_DIR}; only a route's credential variable may carry a credential`;
  if (kw === "lua-load" && !(l.words.length === 2 && a1 === BROKER_READY_LUA))
    return `${at} loads Lua code, which runs inside the broker with its open egress and credentials; the broker loads only the image's ${BROKER_READY_LUA}`;
  const code = CODE_KEYWORDS[kw];
  if (code !== undefined) return `${at} ${code}; the broker runs HAProxy alone`;
  if (kw === "option" || kw === "no") {
    const opt = kw === "no" ? a2 : a1;
    if (kw === "option" && (a1 === "http_proxy" || a1 === "transparent"))
      return `${at} forwards a request to the address the request (or its connection) names; the broker connects only to its routes' upstreams`;
    if (opt === "external-check")
      return `${at} runs a program as a health check; the broker runs HAProxy alone`;
  }
  if (kw === "external-check") return `${at} runs a program as a health check; the broker runs HAProxy alone`;
  if (kw === "server-state-file" || kw === "server-state-base" || kw === "load-server-state-from-file")
    return `${at} loads servers' addresses from a state file, which is not in the input; the broker's servers are the file's own lines`;
  if (kw === "dispatch" || kw === "server-template")
    return `${at} connects to an address of its own; the broker's servers are \`server <name> 0.0.0.0:<port>\`, sent to the address its route's upstream resolved to`;
  // A UNIX socket path is reached only from inside the broker's container, where nothing else runs.
  if (kw === "stats" && ((a1 === "socket" && !a2.startsWith("/")) || a1 === "admin"))
    return `${at} opens HAProxy's runtime API on the network, or the stats page's admin actions, which change servers while it runs; the broker has neither`;
  if (kw === "log" && !LOG_TARGETS.includes(a1) && !a1.startsWith("/"))
    return `${at} sends logs (with request data) to ${JSON.stringify(a1)}; the broker logs only to stdout, stderr or a UNIX socket path (or \`log global\`)`;
  if (kw === "bind" && l.words.some((w) => w === "accept-proxy" || w === "transparent"))
    return `${at} takes a connection's addresses from the client (accept-proxy, transparent); the broker's listeners take none`;
  if (l.words.includes("expect-proxy"))
    return `${at} takes a connection's addresses from a PROXY protocol header the client sends; the broker takes none`;
  if (kw === "filter" && a1 === "spoe")
    return `${at} sends requests to an SPOE agent whose configuration is another file, not in the input`;
  if ((kw === "http-check" || kw === "tcp-check") && l.words.includes("addr"))
    return `${at} connects its checks to an address of its own; checks go only to the server`;
  if (kw === "server" || kw === "default-server") {
    const opt = l.words.slice(kw === "server" ? 3 : 1).find((w) => SERVER_ADDRESS_OPTIONS.includes(w));
    if (opt !== undefined)
      return `${at} sends traffic or checks through another address (${opt}); the broker connects only to its routes' upstreams`;
  }
  if (
    kw === "http-request" ||
    kw === "tcp-request" ||
    kw === "http-response" ||
    kw === "http-after-response"
  ) {
    const action = kw === "tcp-request" ? (l.words[2] ?? "") : a1;
    if (/^(set-uri|set-dst-port|set-dst)$/.test(action) && !(kind === "backend" || kind === "listen"))
      return `${at} changes where a request goes; the broker sets the destination only in a route's backend, to the address the route's upstream resolved to`;
    if (action === "set-uri" || action === "set-dst-port")
      return `${at} changes where a request goes from the request itself; the broker sets only the path (set-path) and the destination its route's upstream resolved to`;
  }
  // The destination variable is set by one do-resolve per backend and nothing else (a converter set-var too).
  if (dst !== undefined)
    for (const w of l.words)
      for (const m of w.matchAll(/(set-var-fmt|set-var|do-resolve)\(([^,)]*)/g)) {
        const name = varName(m[2] ?? "");
        if (
          (name === dst || name.includes("\\")) &&
          !(
            m[1] === "do-resolve" &&
            (kind === "backend" || kind === "listen") &&
            kw === "http-request" &&
            w === l.words[1]
          )
        )
          return `${at} sets ${dst}, the variable the destination is taken from (or a variable spelled with a backslash); only a route backend's \`http-request do-resolve(${dst},...) str(<host>)\` may set it`;
      }
  return undefined;
}

/** The variable a backend's `http-request set-dst var(<v>)` takes the destination from. */
function setDstVariable(l: HaproxyLine): string | undefined {
  if (l.words[0] !== "http-request" || l.words[1] !== "set-dst") return undefined;
  const arg = /^var\(([^,)]+)\)$/.exec(l.words[2] ?? "")?.[1];
  return arg === undefined ? undefined : varName(arg);
}

/** Why a backend's destination is not the one its route resolves, judged refused destinations first; or undefined. */
function backendProblem(lines: readonly HaproxyLine[], name: string): string | undefined {
  const servers = lines.filter((l) => l.words[0] === "server");
  for (const s of servers) {
    const address = s.words[2] ?? "";
    if (!/^0\.0\.0\.0:\d{1,5}$/.test(address))
      return `${quote(s)} connects to ${JSON.stringify(address)}, an address fixed in the file; the broker's servers are \`server <name> 0.0.0.0:<port>\`, sent to the address the route's upstream resolved to, once judged not to be a refused destination (${REFUSED.join(" ")})`;
  }
  const dsts = lines.filter((l) => l.words[0] === "http-request" && l.words[1] === "set-dst");
  const other = lines.find((l) => l.words[0] === "tcp-request" && /^set-dst/.test(l.words[2] ?? ""));
  if (other !== undefined)
    return `${quote(other)} sets the destination from the connection; the broker sets it only with \`http-request set-dst var(<var>)\``;
  if (servers.length === 0 && dsts.length === 0) return undefined;
  const [dst, second] = dsts;
  const need = `backend ${name} must resolve its route's upstream (\`http-request do-resolve(<var>,<resolvers>,ipv4) str(<host>)\`), then \`http-request deny if { var(<var>) -m ip ${REFUSED.join(" ")} }\`, then \`http-request set-dst var(<var>)\` (as the generator writes it)`;
  if (dst === undefined || second !== undefined) return `${need}; it has ${dsts.length} set-dst lines`;
  const variable = setDstVariable(dst);
  if (variable === undefined || variable.includes("\\"))
    return `${quote(dst)} sets the destination from something other than a variable named plainly; ${need}`;
  const at = lines.indexOf(dst);
  const deny = lines[at - 1];
  const words = deny?.words ?? [];
  const cond = words.indexOf("if");
  const list = words.slice(cond + 5, -1);
  const judged =
    deny !== undefined &&
    words[0] === "http-request" &&
    words[1] === "deny" &&
    cond > 1 &&
    words[cond + 1] === "{" &&
    varName(/^var\(([^,)]+)\)$/.exec(words[cond + 2] ?? "")?.[1] ?? "-") === variable &&
    words[cond + 3] === "-m" &&
    words[cond + 4] === "ip" &&
    words.at(-1) === "}" &&
    !list.includes("}") &&
    REFUSED.every((r) => list.includes(r));
  if (!judged)
    return `${quote(dst)} is not right after a deny of every refused destination (\`http-request deny if { var(${variable}) -m ip ${REFUSED.join(" ")} }\`); ${need}`;
  const resolves = lines.filter(
    (l) =>
      l.words[0] === "http-request" &&
      varName(/^do-resolve\(([^,)]*)/.exec(l.words[1] ?? "")?.[1] ?? "-") === variable,
  );
  const [resolve] = resolves;
  if (resolve === undefined || resolves.length > 1 || lines.indexOf(resolve) > at - 1)
    return `${need}; it has ${resolves.length} do-resolve lines of ${variable}${resolve !== undefined && resolves.length === 1 ? " after the deny" : ""}`;
  const host = /^str\(([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)\)$/.exec(resolve.words[2] ?? "")?.[1];
  if (host === undefined || resolve.words.length !== 3)
    return `${quote(resolve)} resolves something other than one host name (\`str(<host>)\`): a name from the request would make the broker forward anywhere; ${need}`;
  return undefined;
}

/**
 * What is wrong with a broker's HAProxy configuration (see the module's comment), or undefined when it is the
 * generator's shape. The message names the line.
 */
export function brokerConfigProblem(config: string): string | undefined {
  const read = readHaproxyConfig(config);
  if ("problem" in read) return `its configuration cannot be judged as HAProxy reads it: ${read.problem}`;
  // The destination variables the backends take their destination from.
  const dsts = new Set<string>();
  for (const s of read.sections)
    for (const l of s.lines) {
      const v = setDstVariable(l);
      if (v !== undefined) dsts.add(v);
    }
  for (const s of read.sections) {
    const [head] = s.lines;
    const refused = REFUSED_SECTIONS[s.kind];
    if (refused !== undefined && head !== undefined)
      return `${quote(head)} ${refused}; the broker's configuration has global, defaults, frontend, backend and resolvers sections`;
    for (const l of s.lines) {
      for (const dst of dsts.size === 0 ? [undefined] : [...dsts]) {
        const why = lineProblem(l, s.kind, dst);
        if (why !== undefined) return why;
      }
    }
    if (s.kind === "backend" || s.kind === "listen") {
      const why = backendProblem(s.lines, head?.words[1] ?? "");
      if (why !== undefined) return why;
    }
  }
  return undefined;
}
