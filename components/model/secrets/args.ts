/**
 * Credentials on a command line: the argv of a container (Kubernetes `command`/`args`, Docker `entrypoints`/
 * `command`, Engine `Entrypoint`/`Cmd`), including shell scripts passed as one argument (`sh -c "..."`).
 *
 * Read the way the programs read them: long options `--password=x` and `--password x` (getopt_long), `NAME=value`
 * words (`env PGPASSWORD=x psql`), and the short options whose meaning depends on the program: MySQL and MariaDB
 * clients take a password only glued to `-p` (`-pSECRET`; `-p SECRET` prompts and `SECRET` is the database), curl
 * `-u user:password`, sshpass `-p`, redis-cli `-a`, mongosh `-p`, sqlcmd `-P`, zip `-P`, 7z `-p...`, smbclient
 * `-U user%password`, lftp `-u user,password`, openssl `-pass`, `-passin`, `-passout` with `pass:...`, keytool `-storepass`/
 * `-keypass`, `docker login -p`, `openssl enc -k`; a cluster of a program's argument-less short options before the
 * password option (`curl -sSfu user:password`, as getopt and curl read it). Known credential formats count anywhere
 * in an argument (also `NAME=value` in an option's value: `--env=PGPASSWORD=x`). Positional passwords, standard
 * input and headers are read per pipeline segment in commands.ts.
 */
import { segmentReasons, stdinReasons, type Word } from "./commands";
import { credentialNameReason, credentialWords, isSwitchName } from "./names";
import { isKeyShaped, isOnlyReferences } from "./shapes";
import { knownFormat } from "./values";

/** Splits a script-like argument into words (quotes removed); a plain argument is one word. */
function wordsOf(arg: string): string[] {
  if (!/\s/.test(arg)) return [arg];
  return (arg.match(/(?:[^\s"']+|"(?:[^"\\]|\\.)*"|'[^']*')+/g) ?? []).map((w) =>
    w.replace(
      /"((?:[^"\\]|\\.)*)"|'([^']*)'/g,
      (_m, a: string | undefined, b: string | undefined) => a ?? b ?? "",
    ),
  );
}

const SEPARATOR = /^(?:;|&&|\|\||\||&)$/;

/**
 * Short options that take no argument, by program, so that a cluster (`curl -sSfu user:pw`) is read as getopt reads
 * it: the flags before the one that takes an argument, which gets the rest of the word or the next word (curl's
 * tool_getparam.c: the ARG_BOOL and ARG_NONE letters).
 */
const BOOLEAN_SHORTS: Readonly<Record<string, string>> = {
  curl: "0123456#:aBfgGiIjJklLMnNOpqRsSvVZ",
};

/** How a program takes a password through a short option. */
interface ShortOption {
  readonly flag: string;
  /** `-pSECRET` */
  readonly glued: boolean;
  /** `-p SECRET` */
  readonly separate: boolean;
  /** The value holds `user<sep>password`; only the part after the separator is the password. */
  readonly userSep?: string;
  /** A subcommand that must come first (`docker login -p`; `docker run -p` publishes a port). */
  readonly after?: string;
}

const MYSQL: ShortOption[] = [{ flag: "-p", glued: true, separate: false }];
const SHORT_OPTIONS: Readonly<Record<string, readonly ShortOption[]>> = {
  mysql: MYSQL,
  mysqldump: MYSQL,
  mysqladmin: MYSQL,
  mysqlimport: MYSQL,
  mysqlshow: MYSQL,
  mysqlcheck: MYSQL,
  mysqlpump: MYSQL,
  mysqlslap: MYSQL,
  mariadb: MYSQL,
  "mariadb-dump": MYSQL,
  "mariadb-admin": MYSQL,
  curl: [
    { flag: "-u", glued: true, separate: true, userSep: ":" },
    { flag: "--user", glued: false, separate: true, userSep: ":" },
    { flag: "-U", glued: true, separate: true, userSep: ":" },
    { flag: "--proxy-user", glued: false, separate: true, userSep: ":" },
  ],
  sshpass: [{ flag: "-p", glued: true, separate: true }],
  // `openssl enc -k password` (the old form of `-pass pass:password`); `-passin`/`-passout` are judged by name.
  openssl: [{ flag: "-k", glued: false, separate: true }],
  "redis-cli": [{ flag: "-a", glued: false, separate: true }],
  mongosh: [{ flag: "-p", glued: false, separate: true }],
  mongo: [{ flag: "-p", glued: false, separate: true }],
  mongodump: [{ flag: "-p", glued: false, separate: true }],
  mongorestore: [{ flag: "-p", glued: false, separate: true }],
  sqlcmd: [{ flag: "-P", glued: false, separate: true }],
  bcp: [{ flag: "-P", glued: false, separate: true }],
  zip: [{ flag: "-P", glued: false, separate: true }],
  unzip: [{ flag: "-P", glued: false, separate: true }],
  "7z": [{ flag: "-p", glued: true, separate: false }],
  "7za": [{ flag: "-p", glued: true, separate: false }],
  smbclient: [{ flag: "-U", glued: false, separate: true, userSep: "%" }],
  lftp: [{ flag: "-u", glued: false, separate: true, userSep: "," }],
  docker: [{ flag: "-p", glued: false, separate: true, after: "login" }],
  podman: [{ flag: "-p", glued: false, separate: true, after: "login" }],
  buildah: [{ flag: "-p", glued: false, separate: true, after: "login" }],
  keytool: ["-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass"].map(
    (flag) => ({ flag, glued: false, separate: true }),
  ),
};

/** Programs whose `--password` without `=` prompts instead of taking the next word. */
const PROMPTING = new Set(Object.keys(SHORT_OPTIONS).filter((p) => SHORT_OPTIONS[p] === MYSQL));
/** The program names an option depends on: the ones with options of their own, and the subcommands they wait for. */
const MATTERS = new Set([
  ...Object.keys(SHORT_OPTIONS),
  ...Object.keys(BOOLEAN_SHORTS),
  ...Object.values(SHORT_OPTIONS).flatMap((os) =>
    os.flatMap((o) => (o.after === undefined ? [] : [o.after])),
  ),
]);

const SHELLS = new Set(["sh", "bash", "ash", "dash", "zsh", "ksh", "mksh", "busybox", "su"]);

function isShell(word: string | undefined): boolean {
  return word !== undefined && SHELLS.has(programName(word));
}

function programName(word: string): string {
  return (word.split("/").at(-1) ?? word).toLowerCase();
}

/** Why a value given to a password option is a credential: anything literal and not empty. */
function literalPassword(value: string, userSep?: string): boolean {
  let v = value;
  if (userSep !== undefined) {
    const i = v.indexOf(userSep);
    if (i < 0) return false; // `-u user`: the program asks for the password
    v = v.slice(i + userSep.length);
  }
  return v.trim() !== "" && !isOnlyReferences(v);
}

/** A long option's name and its glued value: `--db-password=x` -> [`db-password`, `x`]. */
function longOption(word: string): { flag: string; name: string; value: string | undefined } | undefined {
  const m = /^(--?([A-Za-z][A-Za-z0-9_.-]*))(?:=(.*))?$/s.exec(word);
  if (m === null) return undefined;
  return { flag: m[1] ?? "", name: m[2] ?? "", value: m[3] };
}

/** Why an option's value is a credential, judged by the option's name the way a variable's name is. */
function optionReason(flagName: string, name: string, value: string): string | undefined {
  if (value.trim() === "" || isOnlyReferences(value)) return undefined;
  // openssl `pass:x` is literal; `env:VAR`, `file:path`, `fd:3` and `stdin` are references.
  const v = value.replace(/^pass:/, "");
  if (/^(?:env|file|fd):|^stdin$/.test(value)) return undefined;
  // A lone `auth` option usually names a method (`--auth basic`): only a key or `user:pass` is a credential.
  const words = credentialWords(name);
  if (words.length > 0 && words.every((w) => w === "AUTH") && !isKeyShaped(v) && !/.:./.test(v))
    return undefined;
  const byName = credentialNameReason(name, v);
  return byName === undefined ? undefined : `option ${flagName} is given a credential`;
}

/**
 * What follows a password flag in a word: "" for the flag alone (its value is the next word), the glued value
 * (`-pSECRET`, `--user=a:b`), or undefined when the word is not that flag. A short flag may end a cluster of the
 * program's boolean letters (`-sSfu` is `-s -S -f -u`).
 */
function flagRest(word: string, o: ShortOption, booleans: string): string | undefined {
  if (o.flag.startsWith("--")) {
    if (word === o.flag) return "";
    return word.startsWith(`${o.flag}=`) ? word.slice(o.flag.length + 1) : undefined;
  }
  if (!word.startsWith("-") || word.startsWith("--")) return undefined;
  const letters = o.flag.slice(1);
  for (let i = 1; i < word.length; i++) {
    if (word.startsWith(letters, i)) {
      const rest = word.slice(i + letters.length);
      // A glued value of a flag that takes none glued is another word of a longer option (`-storepassfile`).
      return rest !== "" && !o.glued && letters.length > 1 ? undefined : rest;
    }
    if (letters.length > 1 || !booleans.includes(word[i] ?? "")) return undefined;
  }
  return undefined;
}

/** The words of the command line split into pipeline segments, each saying whether it writes into a pipe. */
function segmentsOf(words: readonly Word[]): { words: Word[]; pipedInto: boolean }[] {
  const out: { words: Word[]; pipedInto: boolean }[] = [{ words: [], pipedInto: false }];
  for (const w of words) {
    const last = out.at(-1) as { words: Word[]; pipedInto: boolean };
    if (SEPARATOR.test(w.text)) {
      last.pipedInto = w.text === "|";
      out.push({ words: [], pipedInto: false });
    } else last.words.push(w);
  }
  return out.filter((s) => s.words.length > 0);
}

/** Answers of secretArgReasons, a pure function of the argument list: manifests repeat their commands. Bounded. */
const remembered = new Map<string, ReadonlyMap<number, string>>();

/** Reasons by argument index: which arguments carry a credential, and why (never the value). */
export function secretArgReasons(argv: readonly (string | undefined)[]): Map<number, string> {
  // JSON keeps an absent argument (null) apart from the text "null".
  const key = JSON.stringify(argv);
  let reasons = remembered.get(key);
  if (reasons === undefined) {
    reasons = argReasons(argv);
    if (key.length <= 4096) {
      if (remembered.size >= 4096) remembered.clear();
      remembered.set(key, reasons);
    }
  }
  return new Map(reasons);
}

function argReasons(argv: readonly (string | undefined)[]): Map<number, string> {
  const out = new Map<number, string>();
  const flag = (arg: number, reason: string) => {
    if (!out.has(arg)) out.set(arg, reason);
  };
  const words: Word[] = [];
  argv.forEach((a, arg) => {
    if (a === undefined) return;
    const what = knownFormat(a);
    if (what !== undefined) flag(arg, `it contains ${what}`);
    // A script (`sh -c "..."`, `bash -ec "..."`) is a command line of its own.
    const script =
      arg > 0 && /^-[A-Za-z]*c$/.test(argv[arg - 1] ?? "") && argv.slice(0, arg - 1).some(isShell);
    if (script) words.push({ text: ";", arg });
    const split = wordsOf(a);
    for (const w of split) {
      const trimmed = w.replace(/;+$/, "");
      if (trimmed !== "")
        words.push({ text: trimmed, arg, ...(split.length > 1 && !script ? { source: a } : {}) });
      if (trimmed !== w) words.push({ text: ";", arg });
    }
  });
  // The programs of the segment so far that any option depends on (every other word is one too, but changes
  // nothing), and what they give: kept between words, so that a long command line costs one pass.
  let programs = new Set<string>();
  let options: ShortOption[] = [];
  let booleans = "";
  let prompting = false;
  const addProgram = (name: string): void => {
    if (!MATTERS.has(name) || programs.has(name)) return;
    programs.add(name);
    options = [...programs]
      .flatMap((p) => SHORT_OPTIONS[p] ?? [])
      .filter((o) => o.after === undefined || programs.has(o.after));
    booleans = [...programs].map((p) => BOOLEAN_SHORTS[p] ?? "").join("");
    prompting = [...programs].some((p) => PROMPTING.has(p));
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as Word;
    const next = words[i + 1];
    if (SEPARATOR.test(w.text)) {
      programs = new Set();
      options = [];
      booleans = "";
      prompting = false;
      continue;
    }
    for (const o of options) {
      // The flag, after any cluster of the program's argument-less short options (`-sSfu` is `-s -S -f -u`).
      const rest = flagRest(w.text, o, booleans);
      if (rest === undefined) continue;
      if (rest === "" && o.separate && next !== undefined && literalPassword(next.text, o.userSep))
        flag(next.arg, `${o.flag} is given a password`);
      else if (rest !== "" && (o.glued || o.flag.startsWith("--")) && literalPassword(rest, o.userSep))
        flag(w.arg, `${o.flag} is given a password`);
    }
    const opt = longOption(w.text);
    if (opt !== undefined && opt.name.length > 1) {
      if (opt.value !== undefined) {
        const r = optionReason(opt.flag, opt.name, opt.value);
        if (r !== undefined) flag(w.arg, r);
      } else if (
        next !== undefined &&
        !next.text.startsWith("-") &&
        !isSwitchName(opt.name) &&
        credentialWords(opt.name).length > 0 &&
        !prompting
      ) {
        const r = optionReason(opt.flag, opt.name, next.text);
        if (r !== undefined) flag(next.arg, r);
      }
    }
    addProgram(programName(w.text));
  }
  const segments = segmentsOf(words);
  stdinReasons(segments, flag);
  for (const seg of segments) segmentReasons(seg.words, flag);
  return out;
}
