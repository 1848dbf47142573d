// Same verdict through a real engine: `pulumi preview` with the policy pack on a program of Docker containers,
// and `scan` on the same containers' inputs as a preview's JSON, name the same rules for every resource.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as docker from "@pulumi/docker";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardenedContainerArgs } from "../../components/docker/containerArgs";
import { launchSpec, resolveProject } from "../../components/model";
import { TEST_IMAGE } from "../helpers/docker";
import { type DockerEngineWorkspace, dockerEngineWorkspace, POLICY } from "../helpers/dockerEngine";
import { DECLARED_ARGS, DECLARED_CONFIG, rulesOf, scanJson } from "../scan/helpers";

const CONTAINER = "docker:index/container:Container";
const spec = launchSpec(
  resolveProject({ name: "verdict", budget: { monthlyCapUsd: 10 }, templates: { t: { image: TEST_IMAGE } } }),
  "t",
  "none",
);
const hardened = hardenedContainerArgs(spec, {
  type: "bind",
  source: "/var/lib/sandbox-projects/verdict/t1",
}) as unknown as Record<string, unknown>;

/** One container per way of breaking the walls, plus the toolkit's own hardened task. */
const FIXTURES: Record<string, Record<string, unknown>> = {
  hardened,
  exposed: { ...hardened, ports: [{ internal: 8080, external: 18080 }], publishAllPorts: true },
  socket: {
    ...hardened,
    mounts: [{ type: "bind", source: "/run//docker.sock", target: "/s", readOnly: false }],
  },
  secret: {
    ...hardened,
    envs: ["AWS_SECRET_ACCESS_KEY=abc", "NOTE=ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
  },
  netadmin: { ...hardened, capabilities: { drops: ["ALL"], adds: ["cap_net_admin"] } },
  privileged: { ...hardened, privileged: true, securityOpts: ["seccomp=unconfined", "apparmor=unconfined"] },
  host: { ...hardened, networkMode: "host", pidMode: "host", ipcMode: "host" },
  loose: { image: TEST_IMAGE, command: ["sleep", "1"] },
};

let ws: DockerEngineWorkspace;
beforeAll(async () => {
  ws = await dockerEngineWorkspace();
});
afterAll(() => ws?.cleanup());

describe("the pack in a real preview and scan agree", () => {
  it("on every fixture, rule for rule", async () => {
    const stack = await ws.newStack("verdict", async () => {
      for (const [name, args] of Object.entries(FIXTURES))
        new docker.Container(name, args as unknown as docker.ContainerArgs);
    });
    const engine = new Map<string, Set<string>>();
    const onEvent = (e: EngineEvent) => {
      const p = e.policyEvent;
      if (p?.resourceUrn === undefined) return;
      const name = p.resourceUrn.split("::").pop() ?? "";
      if (!engine.has(name)) engine.set(name, new Set());
      engine.get(name)?.add(p.policyName);
    };
    // The toolkit declares the root its job folders live under, to the pack and to scan alike.
    await stack
      .preview({ policyPacks: POLICY, policyPackConfigs: [DECLARED_CONFIG], onEvent })
      .catch(() => undefined);
    await stack.workspace.removeStack(stack.name, { force: true });

    const preview = {
      steps: Object.entries(FIXTURES).map(([name, inputs]) => {
        const urn = `urn:pulumi:${stack.name}::sandbox::${CONTAINER}::${name}`;
        return { op: "create", urn, newState: { urn, custom: true, type: CONTAINER, inputs } };
      }),
    };
    const file = join(ws.dir, "preview.json");
    writeFileSync(file, JSON.stringify(preview));
    const { report } = await scanJson([file, ...DECLARED_ARGS]);

    for (const name of Object.keys(FIXTURES)) {
      expect({ name, rules: rulesOf(report, name) }).toEqual({
        name,
        rules: [...(engine.get(name) ?? [])].sort(),
      });
    }
    // The fixtures do break the walls, and the engine saw it.
    expect([...(engine.get("exposed") ?? [])]).toContain("sandbox-disallow-exposed-ports");
    expect([...(engine.get("socket") ?? [])]).toContain("sandbox-disallow-runtime-socket");
    expect([...(engine.get("secret") ?? [])]).toContain("sandbox-disallow-secret-env");
    expect([...(engine.get("netadmin") ?? [])]).toContain("sandbox-require-drop-net-admin");
    expect(engine.get("hardened")).toBeUndefined();
  });
});
