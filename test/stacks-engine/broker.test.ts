// The secrets broker through the real Pulumi engine and the real Docker engine: a stack whose route's credential is
// a secret config key goes up with the policy pack; only the broker container holds the credential, the state and
// the outputs hold it only encrypted; the template's probe proves the broker's walls; a changed secret rolls the
// broker; a credential stored as plain text fails before anything is created, naming the key and not the value;
// destroy removes everything. The upstream is never called (its name resolves nowhere): nothing leaves the machine.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectLeftovers } from "../../runtime/offSwitch";
import { sandboxProgram } from "../../stacks/program";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { type DockerEngineWorkspace, dockerEngineWorkspace, POLICY } from "../helpers/dockerEngine";

const project = `ebk-${Math.random().toString(36).slice(2, 7)}`;
const TOKEN = `tok${Math.random().toString(36).slice(2, 12)}${Math.random().toString(36).slice(2, 12)}`;
const NEW_TOKEN = `new${Math.random().toString(36).slice(2, 12)}`;
let dockerApi: Dockerode;
let ws: DockerEngineWorkspace;
const onOutput = (s: string) => process.stdout.write(s);

beforeAll(async () => {
  dockerApi = await requireDocker();
  ws = await dockerEngineWorkspace();
});

afterAll(() => ws?.cleanup());

const projectConfig = (name: string) => ({
  name,
  backend: "docker",
  jobRoot: join(ws.dir, "jobs"),
  budget: { monthlyCapUsd: 10, maxConcurrentTasks: 2 },
  broker: {
    routes: {
      api: {
        upstream: "http://api.invalid",
        paths: ["/data/*"],
        credential: { secret: "apiToken", prefix: "Bearer " },
      },
    },
  },
  templates: { agent: { image: TEST_IMAGE, timeoutSeconds: 120, broker: ["api"] } },
});

/** Every file under `dir` but the job folders. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .filter((f) => !f.includes("/jobs/") && statSync(f).isFile());
}

/** The export's text with every value inside a secret mark (the engine's secret signature) left out. */
function plainOutsideSecrets(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(plainOutsideSecrets).join("\n");
  if (typeof v === "object" && v !== null) {
    if (
      (v as Record<string, unknown>)["4dabf18193072939515e22adb298388d"] ===
      "1b47061264138c4ac30d75fd1eb44270"
    )
      return "";
    return Object.values(v).map(plainOutsideSecrets).join("\n");
  }
  return String(v);
}

async function projectContainers(name: string) {
  return dockerApi.listContainers({ all: true, filters: { label: [`sandbox.project=${name}`] } });
}

describe("a stack with a broker", () => {
  let stack: Stack;

  it("goes up with the policy pack; only the broker holds the credential, and the state only encrypted", async () => {
    stack = await ws.newStack("bk", sandboxProgram, projectConfig(project));
    await stack.setConfig("sandbox:apiToken", { value: TOKEN, secret: true });
    const up = await stack.up({ onOutput, policyPacks: POLICY });
    expect(up.summary.result).toBe("succeeded");
    const containers = await projectContainers(project);
    const holders: string[] = [];
    for (const c of containers) {
      const info = await dockerApi.getContainer(c.Id).inspect();
      if ((info.Config.Env ?? []).some((e) => e.includes(TOKEN)))
        holders.push(info.Config.Labels["sandbox.role"] ?? "?");
    }
    expect(holders).toEqual(["broker"]);
    // On disk (the backend's state and the stack's config file) the credential is only ever ciphertext.
    for (const file of filesUnder(ws.dir)) expect(readFileSync(file, "utf8"), file).not.toContain(TOKEN);
    // The Automation API exports with secrets shown: there the credential sits only inside the engine's secret marks.
    expect(plainOutsideSecrets(await stack.exportStack())).not.toContain(TOKEN);
    expect(JSON.stringify(up.outputs)).not.toContain(TOKEN);
  });

  it("exports a probe report in which the broker's walls hold", async () => {
    const outputs = await stack.outputs();
    type Report = { passed: boolean; walls: { wall: string; observed: string; ok: boolean | null }[] };
    const report = (outputs.probes?.value as Record<string, Report> | undefined)?.agent;
    expect(report?.passed, JSON.stringify(report)).toBe(true);
    const broker = (report?.walls ?? []).filter((w) => w.wall.startsWith("broker"));
    expect(broker.map((w) => `${w.wall} ${w.observed} ${w.ok}`)).toEqual([
      "brokerCredentials absent true",
      "brokerUnknownRoute 404 true",
      "brokerOutsidePath 403 true",
      "brokerTraversal 400 true",
      "brokerDirect denied true",
    ]);
  });

  it("rolls the broker when the secret changes", async () => {
    const before = (await projectContainers(project)).find((c) => c.Labels["sandbox.role"] === "broker");
    await stack.setConfig("sandbox:apiToken", { value: NEW_TOKEN, secret: true });
    const up = await stack.up({ onOutput, policyPacks: POLICY });
    expect(up.summary.result).toBe("succeeded");
    const after = (await projectContainers(project)).find((c) => c.Labels["sandbox.role"] === "broker");
    expect(after?.Id).toBeDefined();
    expect(after?.Id).not.toBe(before?.Id);
    const env = (await dockerApi.getContainer(after?.Id ?? "").inspect()).Config.Env ?? [];
    expect(env).toContain(`SANDBOX_BROKER_CRED_API=${NEW_TOKEN}`);
  });

  it("reports a network connected to the broker behind the stack's back as drift, and up takes it away", async () => {
    const broker = (await projectContainers(project)).find((c) => c.Labels["sandbox.role"] === "broker");
    const foreign = `${project}-foreign`;
    await dockerApi.createNetwork({ Name: foreign, Internal: true, Labels: { "sandbox.test": "foreign" } });
    try {
      await dockerApi.getNetwork(foreign).connect({ Container: broker?.Id ?? "" });
      const refreshed = await stack.refresh({ onOutput });
      expect(refreshed.summary.resourceChanges?.update ?? 0).toBeGreaterThan(0);
      const up = await stack.up({ onOutput, policyPacks: POLICY });
      expect(up.summary.result).toBe("succeeded");
      const after = (await projectContainers(project)).find((c) => c.Labels["sandbox.role"] === "broker");
      const networks = Object.keys(
        (await dockerApi.getContainer(after?.Id ?? "").inspect()).NetworkSettings.Networks,
      );
      expect(networks).not.toContain(foreign);
      // A refresh now finds nothing more to report.
      const again = await stack.refresh({ onOutput });
      expect(again.summary.resourceChanges?.update ?? 0).toBe(0);
    } finally {
      await dockerApi
        .getNetwork(foreign)
        .remove()
        .catch(() => undefined);
    }
  });

  it("destroy removes the broker with everything else", async () => {
    const down = await stack.destroy({ onOutput });
    expect(down.summary.result).toBe("succeeded");
    expect(await projectLeftovers(dockerApi, project)).toEqual([]);
  });
});

describe("a credential stored as plain text", () => {
  it("fails before anything is created, naming the key and never the value", async () => {
    const name = `${project}-p`;
    const stack = await ws.newStack("bkp", sandboxProgram, projectConfig(name));
    await stack.setConfig("sandbox:apiToken", { value: TOKEN, secret: false });
    const failed = await stack.up({ policyPacks: POLICY }).then(
      () => undefined,
      (e: unknown) => String(e),
    );
    expect(failed).toMatch(/sandbox:apiToken: holds route api's credential as plain text/);
    expect(failed).not.toContain(TOKEN);
    expect(await projectLeftovers(dockerApi, name)).toEqual([]);
  });
});
