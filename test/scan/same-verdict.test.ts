// Same verdict everywhere: the CrossGuard pack, run through the policy harness (arguments built the way
// @pulumi/policy's server builds them), and `scan` give the same findings on the same fixtures: Kubernetes
// manifests, Compose services (against hand-written docker.Container equivalents), Engine API create bodies, and the
// resources of a `pulumi preview --json` and a `pulumi stack export`, stack rules included.
//
// The same comparison through a real engine preview is test/stacks-engine/same-verdict.test.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { loadStack } from "../../cli/main";
import { type LaunchSpec, launchSpec } from "../../components/model";
import { blocks, type ReportFinding, type ScanReport } from "../../policy/report/model";
import { ALL_RULES } from "../../policy/rules/registry";
import { composeServiceToContainerProps } from "../../policy/sources/compose/service-props";
import { loadComposeServices } from "../../policy/sources/compose/services";
import { ALL_STACK_RULES } from "../../policy/stack/registry";
import { taskContainer } from "../../runtime/docker/taskContainer";
import { policyPreflight } from "../../runtime/preflight";
import {
  type Outcome,
  remediateThenValidate,
  type StackFixture,
  secret,
  validate,
  validateStack,
} from "../policy/harness";
import { DECLARED_ARGS, FIXTURES, ROOT, scanJson, tempFiles } from "./helpers";

const DOCKER = "docker:index/container:Container";
const STACK_RULES = ALL_STACK_RULES.map((r) => r.id);
/** The engine remediates only with policies at level `remediate` (@pulumi/policy server.js, Remediate). */
const REMEDIATING = ALL_RULES.filter((r) => r.enforcementLevel === "remediate").map((r) => r.id);

/** What the engine does at preview: remediations of `remediate`-level policies, then every validation. */
function engineOutcome(type: string, props: object, name: string): { props: object; outcome: Outcome } {
  const remediated = remediateThenValidate(type, props, { name, selection: { only: REMEDIATING } }).props;
  return { props: remediated, outcome: validate(type, remediated, { name }) };
}

/** `rule: message` of violations, and the rules that noted something they could not check. */
interface Verdict {
  readonly violations: string[];
  readonly notes: string[];
}

function packVerdict(o: Outcome): Verdict {
  return {
    violations: o.violations.map((v) => `${v.policy}: ${v.message}`).sort(),
    notes: [...new Set(o.notes.map((n) => n.policy))].sort(),
  };
}

function scanVerdict(report: ScanReport, file: string, name: string, kind?: string): Verdict {
  const fs = report.findings.filter(
    (f) =>
      f.resource.location.file === file &&
      f.resource.name === name &&
      (kind === undefined || f.resource.kind === kind) &&
      !STACK_RULES.includes(f.ruleId) &&
      // What only the API server's answer shows (a stack export's outputs) is beyond the pack, which sees inputs.
      f.live !== true,
  );
  return {
    violations: fs
      .filter((f) => !f.unchecked)
      .map((f) => `${f.ruleId}: ${f.message}`)
      .sort(),
    notes: [...new Set(fs.filter((f) => f.unchecked).map((f) => f.ruleId))].sort(),
  };
}

function kubeType(apiVersion: string, kind: string): string {
  return apiVersion.includes("/")
    ? `kubernetes:${apiVersion}:${kind}`
    : `kubernetes:core/${apiVersion}:${kind}`;
}

/** Every object of a manifest file, Lists unrolled, read without the scanner's reader. */
function manifests(file: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const add = (v: unknown) => {
    if (typeof v !== "object" || v === null) return;
    const o = v as Record<string, unknown>;
    if (typeof o.kind === "string" && o.kind.endsWith("List") && Array.isArray(o.items)) o.items.forEach(add);
    else out.push(o);
  };
  for (const d of parseAllDocuments(readFileSync(join(ROOT, file), "utf8")) as ReturnType<
    typeof parseAllDocuments
  > &
    unknown[])
    add((d as { toJS: () => unknown }).toJS());
  return out;
}

describe("the pack and scan agree", () => {
  it.each(["agent-deploy.yaml", "pods-list.yaml", "task-job.yaml"])(
    "on Kubernetes manifests: %s",
    async (name) => {
      const file = `${FIXTURES}/kubernetes/${name}`;
      const { report } = await scanJson([file, ...DECLARED_ARGS]);
      let judged = 0;
      for (const m of manifests(file)) {
        const meta = m.metadata as { name: string };
        const type = kubeType(m.apiVersion as string, m.kind as string);
        const pack = validate(type, m, { name: meta.name });
        const applicable = pack.notApplicable.length < ALL_RULES.length;
        if (!applicable) continue; // no rule judges it: scan lists it as skipped
        judged++;
        expect(scanVerdict(report, file, meta.name, m.kind as string), `${m.kind}/${meta.name}`).toEqual(
          packVerdict(pack),
        );
      }
      expect(judged).toBe(report.resources.length);
      expect(report.skipped.length).toBe(manifests(file).length - judged);
    },
  );

  it("on Compose services, against the docker.Container a person would write for each", async () => {
    const file = `${FIXTURES}/compose/compose.yaml`;
    const { report } = await scanJson([file, ...DECLARED_ARGS]);
    const handWritten: Record<string, Record<string, unknown>> = {
      task: {
        image: "sandbox-busybox:1",
        command: ["timeout", "-s", "KILL", "600", "sh", "/job/run.sh"],
        user: "1000:1000",
        readOnly: true,
        capabilities: { drops: ["ALL"] },
        securityOpts: ["no-new-privileges:true"],
        networkMode: "none",
        ipcMode: "private",
        tmpfs: { "/tmp": "rw,noexec,nosuid,nodev,size=64m,mode=1777" },
        mounts: [
          { type: "bind", source: "/var/lib/sandbox-projects/demo/jobs/1", target: "/job", readOnly: false },
        ],
        envs: ["LANG=C.UTF-8", "TASK_ID=1"],
        memory: 512,
        memorySwap: 512,
        cpus: "1",
        restart: "no",
        init: true,
        labels: [
          { label: "sandbox.project", value: "demo" },
          { label: "sandbox.role", value: "task" },
        ],
      },
      agent: {
        image: "registry.example/agent:1",
        privileged: true,
        ports: [{ internal: 80, external: 8080, ip: "127.0.0.1" }],
        mounts: [
          { type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock" },
          // Compose resolves `./cache` against the Compose file's folder.
          { type: "bind", source: join(ROOT, FIXTURES, "compose", "cache"), target: "/cache" },
        ],
        envs: ["OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "LANG=C.UTF-8"],
        pidMode: "host",
        capabilities: { adds: ["SYS_ADMIN"] },
        cpus: "2",
        memory: 2048,
        restart: "always",
      },
    };
    const loaded = Object.fromEntries(
      (() => {
        const r = loadComposeServices(join(ROOT, file), readFileSync(file, "utf8"), {
          readFile: (p) => readFileSync(p, "utf8"),
          env: {},
        });
        return "error" in r ? [] : r.services.map((s) => [s.name, s.spec]);
      })(),
    );
    for (const [name, props] of Object.entries(handWritten)) {
      const fromHand = packVerdict(validate(DOCKER, props, { name }));
      expect(scanVerdict(report, file, name), name).toEqual(fromHand);
      // And the converted props, through the pack, give the same again.
      const converted = packVerdict(
        validate(DOCKER, composeServiceToContainerProps(name, loaded[name]), { name }),
      );
      expect(converted, name).toEqual(fromHand);
    }
    expect(report.findings.filter((f) => f.resource.name === "agent").length).toBeGreaterThan(5);
  });

  it("on Engine API create bodies", async () => {
    for (const name of ["engine-body.json", "engine-body-socket.json"]) {
      const file = `${FIXTURES}/launch/${name}`;
      const { report } = await scanJson([file, ...DECLARED_ARGS]);
      const body = JSON.parse(readFileSync(join(ROOT, file), "utf8")) as { name: string };
      expect(scanVerdict(report, file, body.name)).toEqual(
        packVerdict(validate("launch", body, { name: body.name })),
      );
    }
  });

  describe.each([
    ["preview.json", "steps"],
    ["stack-export.json", "deployment"],
  ])("on Pulumi resources of %s", (name, shape) => {
    const file = `${FIXTURES}/pulumi/${name}`;
    const doc = JSON.parse(readFileSync(join(ROOT, file), "utf8")) as {
      steps?: { op: string; newState?: Record<string, unknown> }[];
      deployment?: { resources: Record<string, unknown>[] };
    };
    const states = (
      shape === "steps" ? (doc.steps ?? []).map((s) => s.newState) : (doc.deployment?.resources ?? [])
    )
      .filter((s): s is Record<string, unknown> => s !== undefined)
      .filter((s) => !String(s.type).startsWith("pulumi:"));
    /** The engine's wire form of the inputs: the shown secrets as secrets, the hidden ones as a secret marker. */
    const wire = (v: unknown): unknown => {
      if (v === "[secret]") return secret("[pulumi secret redacted by the sandbox policy pack]");
      if (Array.isArray(v)) return v.map(wire);
      if (typeof v === "object" && v !== null) {
        const o = v as Record<string, unknown>;
        if ("4dabf18193072939515e22adb298388d" in o)
          return secret(
            typeof o.plaintext === "string"
              ? JSON.parse(o.plaintext)
              : "[pulumi secret redacted by the sandbox policy pack]",
          );
        return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, wire(x)]));
      }
      return v;
    };
    const nameOf = (urn: unknown) => String(urn).slice(String(urn).lastIndexOf("::") + 2);

    it("resource rules, after the pack's remediations (as the engine runs them)", async () => {
      const { report } = await scanJson([file, ...DECLARED_ARGS]);
      let judged = 0;
      for (const s of states) {
        const n = nameOf(s.urn);
        const { outcome } = engineOutcome(String(s.type), wire(s.inputs) as object, n);
        if (outcome.notApplicable.length === ALL_RULES.length) continue;
        judged++;
        expect(scanVerdict(report, file, n), n).toEqual(packVerdict(outcome));
      }
      expect(judged).toBe(report.resources.length);
    });

    it("stack rules, over the remediated stack", async () => {
      const { report } = await scanJson([file, ...DECLARED_ARGS]);
      const fixtures: StackFixture[] = states.map((s) => {
        const n = nameOf(s.urn);
        const deps = (s.propertyDependencies ?? {}) as Record<string, string[]>;
        return {
          type: String(s.type),
          name: n,
          props: engineOutcome(String(s.type), wire(s.inputs) as object, n).props,
          dependsOn: Object.fromEntries(Object.entries(deps).map(([k, urns]) => [k, urns.map(nameOf)])),
        };
      });
      const pack = packVerdict(validateStack(fixtures));
      const stackFindings = report.findings.filter((f) => STACK_RULES.includes(f.ruleId));
      expect({
        violations: stackFindings
          .filter((f) => !f.unchecked)
          .map((f) => `${f.ruleId}: ${f.message}`)
          .sort(),
        notes: [...new Set(stackFindings.filter((f) => f.unchecked).map((f) => f.ruleId))].sort(),
      }).toEqual(pack);
      expect(pack.violations.length).toBeGreaterThan(0);
    });
  });
});

describe("the launcher's preflight and scan agree", () => {
  it("on a launch spec, loosened: the preflight refuses with exactly the mandatory findings scan reports", async () => {
    const project = loadStack(ROOT, "dev");
    const base = launchSpec(project, "default", `${project.spec.name}-net`);
    const loose = { ...base, capDrop: ["NET_RAW"], user: "0:0" };
    const dir = tempFiles({ "loose.json": JSON.stringify(loose), "base.json": JSON.stringify(base) });
    const { report } = await scanJson(["loose.json", "base.json"], undefined, dir);
    const shown = (f: ReportFinding) =>
      `${f.ruleId}: ${f.path === undefined ? f.message : f.message.slice(0, -(f.path.length + 3))}`;
    const blocking = (file: string) =>
      report.findings
        .filter((f) => f.resource.location.file === file && blocks(f))
        .map(shown)
        .sort();
    // The body the launcher would send for a task of the template, as the preflight receives it.
    const refusals = (spec: LaunchSpec) =>
      [...policyPreflight()(taskContainer(spec, "task").body, spec)].sort();
    expect(blocking("loose.json")).toEqual(refusals(loose));
    expect(blocking("loose.json").length).toBeGreaterThan(1);
    expect(blocking("base.json")).toEqual([]);
    expect(refusals(base)).toEqual([]);
  });
});
