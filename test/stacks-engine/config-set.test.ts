/**
 * `sandbox config set` through the front with the toolkit's own Pulumi CLI, in a throwaway root: a broker's
 * credential, given at the verb's input (never its command line), is stored encrypted in the stack's config file
 * with the stack's own secrets provider, and `check`, which refused the unset key before, passes after. A bad key and
 * an empty value change nothing.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { type FrontRoot, frontRoot } from "./front-root";

const TOKEN = `tok-${Math.random().toString(36).slice(2, 12)}${Math.random().toString(36).slice(2, 12)}`;
const fr: FrontRoot = frontRoot("cfg");
const file = join(fr.root, "stacks", "Pulumi.cs.yaml");
fr.writeStack("cs");
// The default template calls a broker route whose credential is the key `sandbox:apiToken`, not set yet.
writeFileSync(
  file,
  readFileSync(file, "utf8").replace(
    "      timeoutSeconds: 120\n",
    "      timeoutSeconds: 120\n      broker: [api]\n",
  ) +
    [
      "  sandbox:broker:",
      "    routes:",
      "      api:",
      "        upstream: http://api.invalid",
      '        paths: ["/data/*"]',
      "        credential: { secret: apiToken }",
      "",
    ].join("\n"),
);

afterAll(() => fr.cleanup());

/** The front with `value` as what the verb reads for a value. */
async function withValue(value: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    { out: (t) => out.push(t), err: (t) => err.push(t), readValue: async () => value },
    fr.root,
    fr.env,
  );
  return { code, out: out.join(""), err: err.join("") };
}

describe("config set", () => {
  it("stores a credential encrypted in the stack's file, after which check passes", async () => {
    const before = await fr.run("check", "cs");
    expect(before.code).toBe(2);
    expect(before.err).toContain("./sandbox config set <stack> sandbox:apiToken --secret");

    const set = await withValue(TOKEN, "config", "set", "cs", "apiToken", "--secret", "--json");
    expect(set.code, set.err).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({
      verb: "config",
      ok: true,
      key: "sandbox:apiToken",
      secret: true,
    });
    const stored = readFileSync(file, "utf8");
    expect(stored).toMatch(/sandbox:apiToken:\s*\n\s*secure: /);
    expect(stored).not.toContain(TOKEN);
    expect(`${set.out}${set.err}`).not.toContain(TOKEN);

    const after = await fr.run("check", "cs");
    expect(after.code, after.err).toBe(0);
  }, 120_000);

  it("refuses a bad key and an empty value, changing nothing", async () => {
    const text = readFileSync(file, "utf8");
    const bad = await withValue(TOKEN, "config", "set", "cs", "not a key", "--secret");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('config: key "not a key": expected namespace:name');
    const empty = await withValue("", "config", "set", "cs", "sandbox:other", "--secret");
    expect(empty.code).toBe(2);
    expect(empty.err).toContain("the value of sandbox:other is empty");
    expect(readFileSync(file, "utf8")).toBe(text);
  }, 60_000);
});
