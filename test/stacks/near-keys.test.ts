import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configMapFromStackYaml, projectFromConfig } from "../../stacks/config";
import { editDistance } from "../../stacks/near-keys";

const devYaml = readFileSync(join(__dirname, "../../stacks/Pulumi.dev.yaml"), "utf8");
const dev = () => configMapFromStackYaml(devYaml, "stacks/Pulumi.dev.yaml");

/** The message a config with `extra` keys added to the dev stack's is refused with (or "accepted"). */
function verdict(extra: Record<string, string>): string {
  try {
    projectFromConfig({ ...dev(), ...extra }, "dev");
    return "accepted";
  } catch (e) {
    return (e as Error).message;
  }
}

const why =
  "a key outside the sandbox: namespace is ignored by the project, so this setting would be silently dropped";

describe("keys meant for the project but outside its namespace", () => {
  it.each([
    ["sandbx:enabled", "sandbox:enabled"],
    ["Sandbox:enabled", "sandbox:enabled"],
    ["SANDBOX:budget.monthlyCapUsd", "sandbox:budget.monthlyCapUsd"],
    ["sandbox.enabled", "sandbox:enabled"],
    ["sandbox_enabled", "sandbox:enabled"],
    ["snadbox:enabled", "sandbox:enabled"],
    ["sandboxes:templates", "sandbox:templates"],
    ["sandbx:enabeld", "sandbox:enabled"],
    ["enabled", "sandbox:enabled"],
    ["jobroot", "sandbox:jobRoot"],
  ])("refuses %s with a did-you-mean %s", (key, meant) => {
    expect(verdict({ [key]: "false" })).toBe(
      `invalid sandbox project config:\n  - ${key}: ${why}; did you mean "${meant}"?`,
    );
  });

  it("drops no hard stop: sandbx:enabled false next to a valid config is refused, not ignored", () => {
    expect(verdict({ "sandbx:enabled": "false" })).not.toBe("accepted");
    // The same setting in the right namespace is accepted and stops the project.
    expect(projectFromConfig({ ...dev(), "sandbox:enabled": "false" }, "dev").spec.enabled).toBe(false);
  });

  it("reports every such key at once, sorted, together with unknown keys inside the namespace", () => {
    expect(verdict({ "sandbx:probe": "true", "Sandbox:name": "x", "sandbox:templats": "{}" })).toBe(
      [
        "invalid sandbox project config:",
        '  - sandbox:templats: unknown config key (did you mean "sandbox:templates"?); allowed keys: sandbox:name, sandbox:backend, sandbox:enabled, sandbox:budget, sandbox:network, sandbox:jobRoot, sandbox:probe, sandbox:agents, sandbox:alerts, sandbox:broker, sandbox:templates, sandbox:kubernetes, sandbox:ledger',
        `  - Sandbox:name: ${why}; did you mean "sandbox:name"?`,
        `  - sandbx:probe: ${why}; did you mean "sandbox:probe"?`,
      ].join("\n"),
    );
  });

  it.each([
    "kubernetes:context",
    "docker:host",
    "aws:region",
    "pulumi:disable-default-providers",
    "sandbox-team:enabled",
    "myapp:threshold",
  ])("leaves %s alone (another namespace, not a near miss)", (key) => {
    expect(verdict({ [key]: "x" })).toBe("accepted");
  });

  it.each([
    ["sandbox", "sandbox", 0],
    ["sandbx", "sandbox", 1],
    ["snadbox", "sandbox", 1],
    ["sandboxes", "sandbox", 2],
    ["backend", "sandbox", 6],
  ])("edit distance %s → %s is %i", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });
});
