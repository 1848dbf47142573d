import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import {
  configMapFromStackYaml,
  decodeConfigValue,
  defaultProjectName,
  ledgerTargetFromConfig,
  projectFromConfig,
} from "../../stacks/config";
import { sandboxProgram } from "../../stacks/program";
import { outputValue, recordingMocks } from "../helpers/pulumiMocks";

const devYaml = readFileSync(join(__dirname, "../../stacks/Pulumi.dev.yaml"), "utf8");
const devConfig = configMapFromStackYaml(devYaml, "stacks/Pulumi.dev.yaml");

/** The dev config with one YAML edit applied, as the engine would hand it to the program. */
const devWith = (from: string, to: string) => {
  expect(devYaml).toContain(from);
  return configMapFromStackYaml(devYaml.replace(from, to), "stacks/Pulumi.dev.yaml");
};

async function refusal(config: Record<string, string>): Promise<{ message: string; registered: number }> {
  const mocks = await recordingMocks({ config });
  let message = "";
  try {
    await sandboxProgram();
  } catch (e) {
    expect(e).toBeInstanceOf(pulumi.RunError);
    message = (e as Error).message;
  }
  return { message, registered: (await mocks.settle()).length };
}

describe("the dev stack config", () => {
  it("is read the way the engine hands it over", () => {
    expect(devConfig["sandbox:backend"]).toBe("docker");
    expect(devConfig["sandbox:enabled"]).toBe("true");
    expect(JSON.parse(devConfig["sandbox:budget"] ?? "")).toEqual({
      monthlyCapUsd: 10,
      usdPerVcpuHour: 0.004,
      usdPerGbHour: 0.002,
      hoursPerMonth: 730,
      maxConcurrentTasks: 2,
    });
  });

  it("targets Docker and fits its budget", () => {
    const p = projectFromConfig(devConfig, "dev");
    expect(p.spec.name).toBe("sandbox-dev");
    expect(p.spec.backend).toBe("docker");
    expect(Object.keys(p.spec.templates)).toEqual(["default", "seed-six"]);
    expect(p.budget.arithmetic).toBe("2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30");
  });

  it("builds the project through the stack program and exports what the runtime reads", async () => {
    const mocks = await recordingMocks({ config: devConfig });
    const outputs = await sandboxProgram();
    expect(outputs.project).toBe("sandbox-dev");
    expect(outputs.networkName && (await outputValue(outputs.networkName))).toBe("sandbox-dev-net");
    const registered = await mocks.settle();
    expect(
      registered
        .filter((r) => r.type === "docker:index/container:Container")
        .map((r) => r.name)
        .sort(),
    ).toEqual(["sandbox-dev-default-probe", "sandbox-dev-seed-six-probe"]);
  });
});

describe("a malformed stack config fails with one clear message and registers nothing", () => {
  it.each([
    [
      "memory: lots",
      devWith("        memoryMb: 512", "        memoryMb: lots"),
      '  - sandbox:templates.default.resources.memoryMb = "lots": memoryMb (megabytes) must be a whole number between 16 and 262144',
    ],
    [
      "a drop set without NET_ADMIN",
      devWith("      capDrop: seed-six", "      capDrop: [NET_RAW, MKNOD]"),
      '  - sandbox:templates.seed-six.capDrop = ["NET_RAW","MKNOD"]: drop list [NET_RAW, MKNOD] leaves NET_ADMIN; allowed: "all", "seed-six", or a list that contains NET_ADMIN or ALL',
    ],
    [
      "a budget below one task",
      devWith("    monthlyCapUsd: 10", "    monthlyCapUsd: 2"),
      '  - sandbox:budget.maxConcurrentTasks = 2: worst case 2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30 > cap $2.00 (not even one task fits), for a slot the size of template "default"; raise the cap, lower the concurrency or shrink the template',
    ],
    [
      "a concurrency above the cap",
      devWith("    maxConcurrentTasks: 2", "    maxConcurrentTasks: 3"),
      '  - sandbox:budget.maxConcurrentTasks = 3: worst case 3 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $10.95 > cap $10.00 (at most 2 fit), for a slot the size of template "default"; raise the cap, lower the concurrency or shrink the template',
    ],
    [
      "enabled: nope",
      devWith('  sandbox:enabled: "true"', "  sandbox:enabled: nope"),
      '  - sandbox:enabled = "nope": enabled must be true or false',
    ],
    [
      "a typo in a key",
      devWith("  sandbox:jobRoot:", "  sandbox:jobroot:"),
      '  - sandbox:jobroot: unknown config key (did you mean "sandbox:jobRoot"?); allowed keys: sandbox:name, sandbox:backend, sandbox:enabled, sandbox:budget, sandbox:network, sandbox:jobRoot, sandbox:probe, sandbox:agents, sandbox:alerts, sandbox:broker, sandbox:templates, sandbox:kubernetes, sandbox:ledger',
    ],
    [
      "a secret in a template's environment",
      devWith(
        "      timeoutSeconds: 120",
        "      timeoutSeconds: 120\n      env:\n        GITHUB_TOKEN: ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      ),
      '  - sandbox:templates.seed-six.env.GITHUB_TOKEN: refused because its name contains "TOKEN", which says it holds a credential; secrets never go into a task\'s environment (the value is not shown)',
    ],
  ])("%s", async (_what, config, line) => {
    const { message, registered } = await refusal(config);
    expect(message).toBe(`invalid sandbox project config:\n${line}`);
    expect(message).not.toContain("ghp_abc");
    expect(registered).toBe(0);
  });

  it("lists every problem in one pass: keys at every level with the nearest one, the budget, and cross-field checks", () => {
    const config: Record<string, string> = {
      ...devWith("  sandbox:jobRoot:", "  sandbox:jobroot:"),
      "sandbox:budget": '{"monthlyCapUsd":1}',
      "sandbox:templates": '{"default":{"image":"x:1","timeoutSecond":5}}',
    };
    let message = "";
    try {
      projectFromConfig(config, "dev");
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('sandbox:jobroot: unknown config key (did you mean "sandbox:jobRoot"?)');
    expect(message).toContain(
      'sandbox:templates.default.timeoutSecond: unknown key (did you mean "timeoutSeconds"?)',
    );
    // Once the keys parse: the budget and the cross-field checks together (an agent naming no such template).
    const { "sandbox:jobroot": _typo, ...rest } = config;
    let second = "";
    try {
      projectFromConfig(
        {
          ...rest,
          "sandbox:templates": '{"default":{"image":"x:1"}}',
          "sandbox:agents": '{"ci":{"templates":["nope"]}}',
        },
        "dev",
      );
    } catch (e) {
      second = (e as Error).message;
    }
    expect(second).toContain("sandbox:budget.monthlyCapUsd = 1: worst case");
    expect(second).toContain('sandbox:agents.ci.templates[0] = "nope": no such template');
  });

  it("builds the same project on Kubernetes when the backend says so, with a provider from sandbox:kubernetes", async () => {
    const mocks = await recordingMocks({
      config: {
        ...devWith("  sandbox:backend: docker", "  sandbox:backend: kubernetes"),
        "sandbox:kubernetes": '{"context":"kind-dev"}',
      },
    });
    const outputs = await sandboxProgram();
    expect(outputs.backend).toBe("kubernetes");
    expect(outputs.namespace && (await outputValue(outputs.namespace))).toBe("sandbox-dev");
    const registered = await mocks.settle();
    expect(registered.find((r) => r.type === "pulumi:providers:kubernetes")?.inputs).toMatchObject({
      context: "kind-dev",
    });
    expect(
      registered
        .filter((r) => r.type === "kubernetes:core/v1:PodTemplate")
        .map((r) => r.name)
        .sort(),
    ).toEqual(["sandbox-dev-default", "sandbox-dev-seed-six"]);
    expect(registered.some((r) => r.type.startsWith("docker:"))).toBe(false);
  });

  it("reports each probe as unread, not a failed program, when the kubeconfig names no cluster it can reach", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-kubeconfig-"));
    const kubeconfig = join(dir, "config");
    writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
    await recordingMocks({
      config: {
        ...devWith("  sandbox:backend: docker", "  sandbox:backend: kubernetes"),
        "sandbox:kubernetes": JSON.stringify({ kubeconfig, context: "kind-dev" }),
      },
    });
    const outputs = await sandboxProgram();
    const probes = (await outputValue(outputs.probes)) as Record<
      string,
      { passed: boolean; problem?: string }
    >;
    expect(Object.keys(probes).sort()).toEqual(["default", "seed-six"]);
    for (const report of Object.values(probes)) {
      expect(report.passed).toBe(false);
      expect(report.problem).toMatch(
        /^the probe Jobs were not read: the kubeconfig .* has no current cluster/,
      );
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a malformed sandbox:kubernetes and registers nothing", async () => {
    const { message, registered } = await refusal({
      ...devWith("  sandbox:backend: docker", "  sandbox:backend: kubernetes"),
      "sandbox:kubernetes": '{"kubeconfig":5}',
    });
    expect(message).toBe(
      "invalid sandbox project config:\n  - sandbox:kubernetes.kubeconfig = 5: kubeconfig must be the path of a kubeconfig file",
    );
    expect(registered).toBe(0);
  });
});

describe("config plumbing", () => {
  it.each([
    ["true", true],
    ["3", 3],
    ['{"a":1}', { a: 1 }],
    ["lots", "lots"],
    ["", ""],
  ])("decodes %j as %j", (raw, value) => {
    expect(decodeConfigValue(raw)).toEqual(value);
  });

  it.each([
    ["dev", "sandbox-dev"],
    ["Team_Prod", "sandbox-team-prod"],
    ["a-very-long-stack-name-that-goes-on-and-on", "sandbox-a-very-long-stack-name-t"],
  ])("names stack %s's project %s", (stack, name) => {
    expect(defaultProjectName(stack)).toBe(name);
  });

  it("gives each caller of the same text a copy of its own, and never another text's map", () => {
    const a = "config:\n  sandbox:name: one\n";
    const b = "config:\n  sandbox:name: two\n";
    for (let i = 0; i < 3; i++) configMapFromStackYaml(a, "f")["sandbox:name"] = "changed by its caller";
    expect(configMapFromStackYaml(a, "f")).toEqual({ "sandbox:name": "one" });
    expect(configMapFromStackYaml(b, "f")).toEqual({ "sandbox:name": "two" });
    expect(configMapFromStackYaml(a, "f")).toEqual({ "sandbox:name": "one" });
    // The same text under another file's name is that file's: its errors name it.
    expect(() => configMapFromStackYaml("config:\n  a: b\n   c: d\n", "x.yaml")).toThrow("x.yaml");
    expect(() => configMapFromStackYaml("config:\n  a: b\n   c: d\n", "y.yaml")).toThrow("y.yaml");
  });

  it("names the file and line of YAML that does not parse", () => {
    expect(() => configMapFromStackYaml("config:\n  a: b\n   c: d\n", "stacks/Pulumi.bad.yaml")).toThrow(
      "invalid stack config file:\n  - stacks/Pulumi.bad.yaml: not valid YAML: Nested mappings are not allowed in compact mappings at line 2, column 6",
    );
  });
});

describe("sandbox:ledger", () => {
  const read = (value: unknown) => () => ledgerTargetFromConfig({ "sandbox:ledger": JSON.stringify(value) });
  it("takes a file, or a shared ledger's PostgreSQL URL without a password", () => {
    expect(read({ file: "/var/lib/p.sqlite" })()).toEqual({ file: "/var/lib/p.sqlite" });
    expect(read({ url: "postgresql://ledger@db.internal:5432/sandbox" })()).toEqual({
      url: "postgresql://ledger@db.internal:5432/sandbox",
    });
    expect(read({ url: "postgresql:///sandbox?host=/run/pg&user=ledger" })()).toEqual({
      url: "postgresql:///sandbox?host=/run/pg&user=ledger",
    });
  });

  it.each([
    [
      { url: "postgresql://ledger:hunter2@db/sandbox" },
      /ledger\.url: url must not hold the password: give it in PGPASSWORD/,
    ],
    [
      { url: "postgresql://ledger@db/sandbox?password=hunter2" },
      /ledger\.url: url must not hold the password/,
    ],
    [{ url: "mysql://ledger@db/sandbox" }, /ledger\.url: url must be a PostgreSQL URL/],
    [{ url: "/var/lib/p.sqlite" }, /ledger\.url: url must be a PostgreSQL URL/],
    [
      { url: "postgresql://ledger@db/x", file: "/var/lib/p.sqlite" },
      /give the ledger a file or a url, not both/,
    ],
  ])("refuses %j, naming the key and never echoing a password", (value, says) => {
    expect(read(value)).toThrow(says);
    try {
      read(value)();
    } catch (e) {
      expect(String((e as Error).message)).not.toContain("hunter2");
    }
  });
});
