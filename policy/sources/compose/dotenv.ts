/**
 * `.env` and `env_file` files as compose-go's dotenv parser reads them: `KEY=value`, `KEY: value`, `export KEY=...`,
 * `#` comments (inline only after a space in unquoted values), single quotes literal, double quotes with escapes and
 * interpolation, unquoted values trimmed and interpolated, a bare `KEY` line inherited from the environment.
 */
import { substitute } from "./interpolate";
import { ComposeError } from "./yaml";

const SPACE = new Set(["\t", "\v", "\f", "\r", " ", "\u0085", "\u00a0"]);

function isNameChar(c: string): boolean {
  return c === "_" || c === "." || c === "-" || c === "[" || c === "]" || /[\p{L}\p{N}]/u.test(c);
}

const ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  c: "c",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  '"': '"',
  "\\": "\\",
};

function expandEscapes(s: string): string {
  return s.replace(/\\(?:[abcfnrtv$"\\]|0\d{0,3})/g, (m) => {
    if (m === "\\$") return "$$";
    if (m.startsWith("\\0")) {
      const oct = m.slice(2);
      // Go's UnquoteChar reads `\NNN` octal (exactly three digits); anything else stays as written.
      return oct.length === 2 ? String.fromCharCode(Number.parseInt(`0${oct}`, 8)) : m;
    }
    return ESCAPES[m.slice(1)] ?? m;
  });
}

/**
 * Parses one env file into `out` (later keys win). `inherited` looks a name up in the caller's environment: it
 * answers bare keys and wins over the file's own earlier keys during interpolation.
 */
export function parseDotenv(
  src: string,
  file: string,
  inherited: (name: string) => string | undefined,
  out: Map<string, string>,
): void {
  const lookup = (k: string) => inherited(k) ?? out.get(k);
  let rest = src;
  let line = 1;
  for (;;) {
    // The start of the next statement: skip blank space and comment lines.
    let pos = 0;
    for (;;) {
      while (pos < rest.length && /\s/u.test(rest[pos] ?? "")) {
        if (rest[pos] === "\n") line++;
        pos++;
      }
      if (rest[pos] !== "#") break;
      const nl = rest.indexOf("\n", pos);
      if (nl < 0) pos = rest.length;
      else pos = nl;
    }
    rest = rest.slice(pos);
    if (rest === "") return;
    if (/^export\s+/.test(rest)) rest = rest.slice(6).replace(/^[\t\v\f\r \u0085\u00a0]+/u, "");
    let key = "";
    let offset = -1;
    let bare = false;
    for (let i = 0; i < rest.length; i++) {
      const c = rest[i] ?? "";
      if (SPACE.has(c)) continue;
      if (c === "=" || c === ":" || c === "\n") {
        key = rest.slice(0, i);
        offset = i + 1;
        bare = c === "\n";
        break;
      }
      if (!isNameChar(c))
        throw new ComposeError(
          `failed to read ${file}: line ${line}: unexpected character ${JSON.stringify(c)} in variable name ${JSON.stringify(rest.split("\n")[0])}`,
        );
    }
    if (offset < 0) {
      // A last line with a name and no `=`: compose-go reads it as a name that ends the file.
      key = rest;
      offset = rest.length;
      bare = true;
    }
    if (bare) line++;
    key = key.replace(/\s+$/u, "");
    if (key.includes(" "))
      throw new ComposeError(`failed to read ${file}: line ${line}: key cannot contain a space`);
    rest = rest.slice(offset).replace(/^[\t\v\f\r \u0085\u00a0]+/u, "");
    if (bare) {
      const v = inherited(key);
      if (v !== undefined) out.set(key, v);
      continue;
    }
    const quote = rest[0];
    if (quote !== '"' && quote !== "'") {
      const nl = rest.indexOf("\n");
      let value = nl < 0 ? rest : rest.slice(0, nl);
      rest = nl < 0 ? "" : rest.slice(nl + 1);
      line++;
      const hash = value.indexOf(" #");
      if (hash >= 0) value = value.slice(0, hash);
      out.set(key, substitute(value.replace(/\s+$/u, ""), lookup));
      continue;
    }
    let escaped = false;
    let chars = "";
    let end = -1;
    for (let i = 1; i < rest.length; i++) {
      const c = rest[i] ?? "";
      if (c === "\n") line++;
      if (c !== quote) {
        if (!escaped && c === "\\") {
          escaped = true;
          continue;
        }
        if (escaped) {
          escaped = false;
          chars += "\\";
        }
        chars += c;
        continue;
      }
      if (escaped) {
        escaped = false;
        chars += c;
        continue;
      }
      end = i;
      break;
    }
    if (end < 0) throw new ComposeError(`failed to read ${file}: line ${line}: unterminated quoted value`);
    out.set(key, quote === '"' ? substitute(expandEscapes(chars), lookup) : chars);
    rest = rest.slice(end + 1);
  }
}
