// Help never acts: every verb's `--help`, `-h` and `help <verb>` print that verb's usage and nothing else runs (no
// config is read: the stack file here is broken on purpose, and the environment has no engine); verbs that change
// or remove objects need their stack named, and on a terminal the removing ones ask first.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { completionScript, VERB_HELP, VERBS } from "../../cli/help";
import { EXIT, main } from "../../cli/main";
import type { Io } from "../../cli/output";

let root: string;
let env: NodeJS.ProcessEnv;
let empty: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "sandbox-help-"));
  mkdirSync(join(root, "stacks"));
  // A config that fails: any verb that read it would say so instead of printing its help.
  writeFileSync(join(root, "stacks", "Pulumi.dev.yaml"), "config:\n  sandbox:budget: lots\n");
  writeFileSync(join(root, "stacks", "Pulumi.prod.yaml"), "config:\n  sandbox:budget: lots\n");
  empty = mkdtempSync(join(tmpdir(), "sandbox-empty-"));
  env = { PATH: empty, XDG_CACHE_HOME: empty, PULUMI_HOME: empty };
});

afterEach(() => {
  for (const dir of [root, empty]) rmSync(dir, { recursive: true, force: true });
});

async function run(argv: string[], extra: Partial<Io> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), ...extra }, root, env);
  return { code, out: out.join(""), err: err.join("") };
}

describe("help never acts", () => {
  // scan has its own options and help (`sandbox scan --help`, tested with the scanner).
  const verbs = VERBS.filter((v) => v !== "scan");

  it.each(verbs)("%s --help, -h and help <verb> print the verb's usage and exit 0", async (verb) => {
    const forms = [
      [verb, "--help"],
      [verb, "-h"],
      ["help", verb],
    ];
    if (verb !== "help") forms.push([verb, "dev", "--help"]);
    for (const argv of forms) {
      const r = await run(argv);
      expect({ argv, code: r.code, err: r.err }).toEqual({ argv, code: EXIT.ok, err: "" });
      expect(r.out).toBe(`${VERB_HELP[verb]}\n`);
    }
  });

  it("every verb's help names its usage, an example and its exit codes", () => {
    for (const verb of VERBS) {
      const text = VERB_HELP[verb] ?? "";
      expect(text.startsWith(`usage: sandbox ${verb}`), verb).toBe(true);
      if (!["help", "test"].includes(verb)) expect(text, verb).toMatch(/\nexamples:\n/);
      if (!["help", "test"].includes(verb)) expect(text, verb).toMatch(/\nexit codes: /);
    }
  });

  it("off --help and destroy --help never start the off switch, even for a project named like the flag", async () => {
    for (const verb of ["off", "destroy"]) {
      const r = await run([verb, "--help", "--json"]);
      expect(r.code).toBe(EXIT.ok);
      expect(r.out).toBe(`${VERB_HELP[verb]}\n`);
    }
  });

  it("an unknown verb, or help on one, says so with the nearest verb and exits 2", async () => {
    expect(await run(["pobe", "dev"])).toEqual({
      code: EXIT.badInput,
      out: "",
      err: 'unknown command "pobe"; did you mean "probe"? (`sandbox help` lists every verb)\n',
    });
    expect((await run(["help", "spnd"])).err).toBe(
      'unknown command "spnd"; did you mean "spend"? (`sandbox help` lists every verb)\n',
    );
    const json = await run(["launch", "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({ ok: false, exitCode: 2, error: { kind: "bad-input" } });
  });
});

describe("the stack of a verb that changes or removes objects is named on purpose", () => {
  it.each(["up", "destroy", "off"])(
    "%s with no stack does nothing and lists the stacks, exit 2",
    async (verb) => {
      const r = await run([verb]);
      expect(r).toEqual({
        code: EXIT.badInput,
        out: "",
        err: `${verb} acts on a stack named on purpose: \`sandbox ${verb} <stack>\` (stacks here: dev, prod); nothing was done\n`,
      });
      const json = await run([verb, "--json"]);
      expect(JSON.parse(json.out)).toMatchObject({
        verb,
        ok: false,
        exitCode: 2,
        error: { kind: "bad-input" },
      });
    },
  );

  it("destroy and off ask on a terminal; anything but yes does nothing; --yes and --json never ask", async () => {
    for (const verb of ["destroy", "off"]) {
      const asked: string[] = [];
      const no = await run([verb, "dev"], {
        ask: async (q) => {
          asked.push(q);
          return "n";
        },
      });
      expect(no.code).toBe(EXIT.badInput);
      expect(no.err).toBe(`${verb}: not confirmed; nothing was done (--yes skips the question)\n`);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(new RegExp(`^${verb} .*dev.*\\? \\[y/N\\] $`));
    }
    // --yes, -y, --json: no question; destroy goes on and meets the missing engine here (off --yes, which reaches
    // the engine, is in test/runtime/run-verb.test.ts).
    const never = async (): Promise<string> => {
      throw new Error("asked");
    };
    for (const flags of [["--yes"], ["-y"], ["--json"]]) {
      const r = await run(["destroy", "dev", ...flags], { ask: never });
      expect(r.code).toBe(EXIT.missingTool);
    }
  });
});

describe("--version and completion", () => {
  it("--version names the toolkit with the checkout's commit, the Pulumi CLI, Node and the providers", async () => {
    const r = await run(["--version"]);
    expect(r.code).toBe(EXIT.ok);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^sandbox (\d+\.\d+\.\d+|not installed)/);
    expect(lines[1]).toMatch(/^pulumi (v\d+\.\d+\.\d+|not found)/);
    expect(lines[2]).toBe(`node ${process.version}`);
    expect(lines[3]).toMatch(/^@pulumi\/pulumi .*, @pulumi\/docker .*, @pulumi\/kubernetes /);
    // The project's own root: a checkout, unreleased, at its commit.
    const own = await main(["--version"], { out: (t) => void lines.push(t), err: () => undefined });
    expect(own).toBe(EXIT.ok);
    expect(lines.at(-1)).toMatch(
      /^sandbox \d+\.\d+\.\d+\+unreleased\.[0-9a-f]{12} \(a checkout, not a release\)\n/,
    );
  });

  it("completion prints a script bash and zsh accept, with every verb; another shell is refused", async () => {
    for (const shell of ["bash", "zsh"]) {
      const r = await run(["completion", shell]);
      expect(r.code).toBe(EXIT.ok);
      expect(r.out).toBe(completionScript(shell));
      for (const verb of ["up", "destroy", "run", "off", "scan", "spend"]) expect(r.out).toContain(verb);
    }
    const checked = spawnSync("bash", ["-n"], { input: completionScript("bash"), encoding: "utf8" });
    expect(checked.status).toBe(0);
    expect((await run(["completion", "fish"])).code).toBe(EXIT.badInput);
  });
});
