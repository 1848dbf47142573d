/**
 * Credentials that programs take by position, from standard input or in headers, read by each program's grammar
 * (args.ts splits the command line into pipeline segments of words and calls these per segment):
 *
 * - a literal written to a pipe (`echo x |`, `printf '%s' x |`) or a here-string (`<<< x`) that a password reader
 *   consumes: a `--*-stdin` option with a credential word (`docker login --password-stdin`), `sudo -S`/`--stdin`,
 *   `passwd --stdin`, `chpasswd`, `htpasswd -i`, `vault login -`, OpenSSL's `-passin stdin`;
 * - positional passwords: `htpasswd -b[n] [file] user password`, redis-cli `AUTH [user] password`, `vault login
 *   <token>`, and setters that take a name and a value (`aws configure set`, `npm|yarn|pnpm config set`,
 *   `git config`, redis `CONFIG SET`), the name judged like a variable's;
 * - headers: curl `-H`/`--header`/`--proxy-header` (also glued), wget `--header=`, HTTPie `Name:value` items.
 */
import { credentialNameReason, credentialWords, isSwitchName } from "./names";
import { isOnlyReferences } from "./shapes";
import { secretHeaderReason } from "./values";

/** One word of the command line and the argument it came from. */
export interface Word {
  readonly text: string;
  readonly arg: number;
  /** The whole argument the word came from (a header given as one argument keeps its spaces). */
  readonly source?: string;
}

type Flag = (arg: number, reason: string) => void;

function programName(word: string): string {
  return (word.split("/").at(-1) ?? word).toLowerCase();
}

/** The program a segment runs, past `sudo`/`env`/`exec` wrappers and leading `NAME=value` words. */
function programIndex(seg: readonly Word[]): number {
  let i = 0;
  while (i < seg.length) {
    const t = seg[i]?.text ?? "";
    const p = programName(t);
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(t) || p === "env" || p === "exec" || p === "command" || p === "time")
      i++;
    else break;
  }
  return i;
}

const literal = (t: string | undefined): t is string =>
  t !== undefined && t.trim() !== "" && !t.startsWith("-") && !isOnlyReferences(t);

/** True when the segment reads a password or token from standard input. */
function readsSecretFromStdin(seg: readonly Word[]): boolean {
  const p = programIndex(seg);
  const prog = programName(seg[p]?.text ?? "");
  const words = seg.map((w) => w.text);
  if (prog === "chpasswd") return true;
  if (prog === "passwd" && words.includes("--stdin")) return true;
  if (prog === "sudo" && words.some((w) => w === "--stdin" || /^-[A-Za-z]*S[A-Za-z]*$/.test(w))) return true;
  if (prog === "htpasswd" && words.some((w) => /^-[A-Za-z]*i[A-Za-z]*$/.test(w))) return true;
  if (prog === "vault" && words[p + 1] === "login" && words.includes("-")) return true;
  return words.some((w, i) => {
    const m = /^--?([A-Za-z][A-Za-z0-9_-]*)$/.exec(w);
    if (m === null) return /^-pass(?:in|out)?$/.test(words[i - 1] ?? "") && w === "stdin";
    const name = m[1] ?? "";
    return /(?:^|[-_])stdin$/i.test(name) && credentialWords(name).length > 0 && isSwitchName(name);
  });
}

/** The literal words an `echo`/`printf` segment writes (its format string aside). */
function printedWords(seg: readonly Word[]): Word[] {
  const p = programIndex(seg);
  const prog = programName(seg[p]?.text ?? "");
  if (prog !== "echo" && prog !== "printf") return [];
  let rest = seg.slice(p + 1).filter((w) => !/^-[neE]+$/.test(w.text));
  if (prog === "printf" && rest[0] !== undefined && rest[0].text.includes("%")) rest = rest.slice(1);
  return rest.filter((w) => literal(w.text));
}

/** Literals piped (`echo x | docker login --password-stdin`) or here-stringed (`<<< x`) into a password reader. */
export function stdinReasons(segments: readonly { words: Word[]; pipedInto: boolean }[], flag: Flag): void {
  segments.forEach((s, i) => {
    const next = segments[i + 1];
    if (s.pipedInto && next !== undefined && readsSecretFromStdin(next.words))
      for (const w of printedWords(s.words))
        flag(w.arg, "a literal is piped into a program that reads a password from standard input");
    const here = s.words.findIndex((w) => w.text === "<<<");
    const fed = here < 0 ? undefined : s.words[here + 1];
    if (fed !== undefined && literal(fed.text) && readsSecretFromStdin(s.words.slice(0, here)))
      flag(fed.arg, "a literal is fed to a program that reads a password from standard input");
  });
}

/** `name value` setters: the words after the program's `set` (or `git config`), judged by the name. */
function setterReasons(seg: readonly Word[], p: number, prog: string, flag: Flag): void {
  const words = seg.map((w) => w.text.toLowerCase());
  let at = -1;
  if (prog === "git" && words[p + 1] === "config") at = p + 2;
  else {
    const i = words.findIndex((w, j) => j > p && (w === "set" || w === "set-value"));
    if (i > 0) at = i + 1;
  }
  if (at < 0) return;
  const rest = seg.slice(at).filter((w) => !w.text.startsWith("-"));
  const [name, value] = rest;
  if (name === undefined || value === undefined || !literal(value.text)) return;
  if (credentialNameReason(name.text, value.text) !== undefined)
    flag(value.arg, `setting ${name.text} is given a credential`);
}

/** Passwords by position: htpasswd batch mode, redis-cli AUTH, vault login's token. */
function positionalReasons(seg: readonly Word[], p: number, prog: string, flag: Flag): void {
  const after = seg.slice(p + 1);
  if (prog === "htpasswd") {
    const opts = after
      .filter((w) => /^-[A-Za-z]+$/.test(w.text))
      .map((w) => w.text.slice(1))
      .join("");
    if (!opts.includes("b")) return;
    const pos = after.filter((w) => !w.text.startsWith("-"));
    const pw = pos[opts.includes("n") ? 1 : 2];
    if (literal(pw?.text) && pw !== undefined) flag(pw.arg, "htpasswd -b is given a password");
    return;
  }
  if (prog === "redis-cli" || prog === "valkey-cli" || prog === "keydb-cli") {
    const i = after.findIndex((w) => w.text.toUpperCase() === "AUTH");
    const pw =
      i < 0
        ? undefined
        : after
            .slice(i + 1)
            .filter((w) => !w.text.startsWith("-"))
            .slice(0, 2)
            .at(-1);
    if (pw !== undefined && literal(pw.text)) flag(pw.arg, "redis AUTH is given a password");
    return;
  }
  if (prog === "vault" && after[0]?.text === "login") {
    // `vault login [options] [TOKEN | -]`; with `-method`, positional words are the method's `key=value` pairs.
    if (after.some((w) => /^-{1,2}method(?:=|$)/.test(w.text))) return;
    const tok = after.slice(1).find((w) => !w.text.startsWith("-") && !w.text.includes("="));
    if (tok !== undefined && literal(tok.text)) flag(tok.arg, "vault login is given a token");
  }
}

/** Header options and items, each `Name: value`. */
function headerReasons(seg: readonly Word[], p: number, prog: string, flag: Flag): void {
  const judge = (w: Word, text: string) => {
    const m = /^\s*([A-Za-z0-9_-]+)\s*:\s*(.*)$/s.exec(text);
    const why = m === null ? undefined : secretHeaderReason(m[1] ?? "", m[2] ?? "");
    if (why !== undefined) flag(w.arg, `it sends ${why}`);
  };
  for (let i = p + 1; i < seg.length; i++) {
    const w = seg[i] as Word;
    const t = w.text;
    const next = seg[i + 1];
    if ((t === "-H" || t === "--header" || t === "--proxy-header" || t === "--headers") && next !== undefined)
      judge(next, next.source ?? next.text);
    else if (/^--(?:proxy-)?headers?=/.test(t)) judge(w, (w.source ?? t).slice(t.indexOf("=") + 1));
    else if (prog === "curl" && /^-H./.test(t)) judge(w, (w.source ?? t).slice(2));
    else if (
      (prog === "http" || prog === "https" || prog === "xh" || prog === "xhs") &&
      /^[A-Za-z0-9_-]+:[^=/]/.test(t)
    )
      judge(w, t);
  }
}

/** Every per-program reading of one pipeline segment. */
export function segmentReasons(seg: readonly Word[], flag: Flag): void {
  const p = programIndex(seg);
  const prog = programName(seg[p]?.text ?? "");
  setterReasons(seg, p, prog, flag);
  positionalReasons(seg, p, prog, flag);
  headerReasons(seg, p, prog, flag);
}
