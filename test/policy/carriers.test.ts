/**
 * A pod spec gets the same verdict wherever it lives: under every known carrier path, rebuilt from Argo Workflows,
 * and under a generated unknown kind found by shape. Safe pods stay safe everywhere (no new false denial).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judge } from "../../policy/rules/registry";
import { adaptResources } from "../../policy/sources/subject";
import type { Subject } from "../../policy/workload";
import { argoWorkflow, TEMPLATE_PLACEMENTS } from "./carrier-kinds";
import { copy, safeK8sContainer, safePodSpec } from "./fixtures";

type Obj = Record<string, unknown>;

/** Rules whose verdict is the pod's own, whatever carries it (restart and Job rules depend on the carrier). */
const POD_RULES = new Set([
  "sandbox-disallow-exposed-ports",
  "sandbox-disallow-runtime-socket",
  "sandbox-disallow-secret-env",
  "sandbox-require-drop-net-admin",
  "sandbox-disallow-privileged",
  "sandbox-disallow-host-namespaces",
  "sandbox-disallow-added-capabilities",
  "sandbox-disallow-privilege-escalation",
  "sandbox-disallow-unconfined-seccomp",
  "sandbox-disallow-unmasked-proc",
  "sandbox-require-non-root",
  "sandbox-require-resource-limits",
  "sandbox-disallow-devices",
  "sandbox-disallow-sysctls",
  "sandbox-disallow-sensitive-host-mounts",
  "sandbox-require-single-job-mount",
  "sandbox-disallow-service-account-token",
]);

function workloads(type: string, props: unknown): Subject[] {
  return adaptResources(type, props, "r").filter((s) => s.subject === "workload");
}

/** The pod rules that report a violation (not a note) on the resource's pods. */
function verdict(type: string, props: unknown): string[] {
  const ids = new Set<string>();
  for (const s of workloads(type, props))
    for (const { rule, findings } of judge(s))
      if (POD_RULES.has(rule.id) && findings.some((f) => !f.unchecked)) ids.add(rule.id);
  return [...ids].sort();
}

const plainPod = (spec: Obj) => verdict("kubernetes:core/v1:Pod", { metadata: { name: "p" }, spec });

/** One dangerous change to the safe pod, each from a different wall. */
const DANGERS: readonly [string, (s: Obj) => void][] = [
  [
    "privileged",
    (s) => {
      sc0(s).privileged = true;
    },
  ],
  [
    "hostNetwork",
    (s) => {
      s.hostNetwork = true;
    },
  ],
  [
    "hostPID",
    (s) => {
      s.hostPID = true;
    },
  ],
  [
    "hostIPC",
    (s) => {
      s.hostIPC = "true";
    },
  ],
  [
    "docker socket",
    (s) => {
      addHostMount(s, "/var/run/docker.sock");
    },
  ],
  [
    "/etc from the host",
    (s) => {
      addHostMount(s, "/etc");
    },
  ],
  [
    "SYS_ADMIN added",
    (s) => {
      (sc0(s).capabilities as Obj).add = ["SYS_ADMIN"];
    },
  ],
  [
    "root user",
    (s) => {
      sc0(s).runAsUser = 0;
      sc0(s).runAsNonRoot = false;
    },
  ],
  [
    "escalation allowed",
    (s) => {
      sc0(s).allowPrivilegeEscalation = true;
    },
  ],
  [
    "unconfined seccomp",
    (s) => {
      sc0(s).seccompProfile = { type: "Unconfined" };
    },
  ],
  [
    "unsafe sysctl",
    (s) => {
      (s.securityContext as Obj).sysctls = [{ name: "kernel.msgmax", value: "1" }];
    },
  ],
  [
    "no memory limit",
    (s) => {
      ((c0(s).resources as Obj).limits as Obj).memory = undefined;
    },
  ],
  [
    "GPU",
    (s) => {
      ((c0(s).resources as Obj).limits as Obj)["nvidia.com/gpu"] = 1;
    },
  ],
  [
    "secret in env",
    (s) => {
      (c0(s).env as Obj[]).push({ name: "T", valueFrom: { secretKeyRef: { name: "s", key: "k" } } });
    },
  ],
  [
    "token mounted",
    (s) => {
      s.automountServiceAccountToken = true;
    },
  ],
  [
    "host port",
    (s) => {
      c0(s).ports = [{ containerPort: 8080, hostPort: 8080 }];
    },
  ],
  [
    "privileged sidecar",
    (s) => {
      const side = safeK8sContainer("side");
      (side.securityContext as Obj).privileged = true;
      (s.containers as Obj[]).push(side);
    },
  ],
];

function c0(s: Obj): Obj {
  return (s.containers as Obj[])[0] as Obj;
}
function sc0(s: Obj): Obj {
  return c0(s).securityContext as Obj;
}
function addHostMount(s: Obj, path: string): void {
  (s.volumes as Obj[]).push({ name: "host", hostPath: { path } });
  (c0(s).volumeMounts as Obj[]).push({ name: "host", mountPath: "/host", readOnly: true });
}

/** A pod spec with any non-empty subset of the dangers. */
const dangerousSpec = fc.subarray([...DANGERS], { minLength: 1 }).map((picked) => {
  const s = copy(safePodSpec());
  for (const [, apply] of picked) apply(s);
  return { spec: JSON.parse(JSON.stringify(s)) as Obj, names: picked.map(([n]) => n) };
});

/** A custom resource no table knows, with the pod template somewhere under `spec`. */
const unknownKind = fc.record({
  group: fc.stringMatching(/^[a-z]{3,8}\.example\.(com|io)$/),
  kind: fc.stringMatching(/^[A-Z][a-z]{2,10}$/),
  keys: fc.array(fc.stringMatching(/^[a-z][a-zA-Z]{1,8}$/), { minLength: 0, maxLength: 4 }),
  template: fc.constantFrom("template", "podTemplate", "pod"),
});

function nest(keys: readonly string[], leaf: unknown): unknown {
  return keys.reduceRight<unknown>((acc, k) => ({ [k]: acc }), leaf);
}

describe("a pod spec gets the same verdict wherever it lives", () => {
  it("the safe pod passes every pod rule under every carrier, Argo, and an unknown kind", () => {
    const spec = safePodSpec();
    expect(plainPod(spec)).toEqual([]);
    for (const p of TEMPLATE_PLACEMENTS)
      expect([p.name, verdict(p.type, p.build(copy(spec)))]).toEqual([p.name, []]);
    expect(verdict("kubernetes:argoproj.io/v1alpha1:Workflow", argoWorkflow(copy(spec)))).toEqual([]);
    fc.assert(
      fc.property(unknownKind, (u) => {
        const props = { spec: nest(u.keys, { [u.template]: { metadata: {}, spec: copy(spec) } }) };
        expect(verdict(`kubernetes:${u.group}/v1:${u.kind}`, props)).toEqual([]);
      }),
      { numRuns: 50 },
    );
  });

  it("each danger alone is caught in a plain Pod (the families below compare against a real verdict)", () => {
    for (const [name, apply] of DANGERS) {
      const s = copy(safePodSpec());
      apply(s);
      expect([name, plainPod(JSON.parse(JSON.stringify(s)) as Obj).length > 0]).toEqual([name, true]);
    }
  });

  it.each(TEMPLATE_PLACEMENTS.map((p) => [p.name, p] as const))("under a %s", (_name, p) => {
    fc.assert(
      fc.property(dangerousSpec, ({ spec }) => {
        expect(verdict(p.type, p.build(copy(spec)))).toEqual(plainPod(spec));
      }),
      { numRuns: 40 },
    );
  });

  it("rebuilt from an Argo Workflow (workflow fields, the template's container and sidecars, a podSpecPatch)", () => {
    fc.assert(
      fc.property(dangerousSpec, ({ spec }) => {
        expect(verdict("kubernetes:argoproj.io/v1alpha1:Workflow", argoWorkflow(copy(spec)))).toEqual(
          plainPod(spec),
        );
        const cron = { spec: { schedule: "* * * * *", workflowSpec: argoWorkflow(copy(spec)).spec } };
        expect(verdict("kubernetes:argoproj.io/v1alpha1:CronWorkflow", cron)).toEqual(plainPod(spec));
      }),
      { numRuns: 60 },
    );
  });

  it("under a generated unknown kind, found by shape", () => {
    fc.assert(
      fc.property(dangerousSpec, unknownKind, ({ spec }, u) => {
        const props = {
          apiVersion: `${u.group}/v1`,
          kind: u.kind,
          spec: nest(u.keys, { [u.template]: { metadata: {}, spec: copy(spec) } }),
        };
        expect(verdict(`kubernetes:${u.group}/v1:${u.kind}`, props)).toEqual(plainPod(spec));
        // A bare pod spec (a `containers` list of images) is found the same way.
        const bare = { spec: nest([...u.keys, "podSpec"], copy(spec)) };
        expect(verdict(`kubernetes:${u.group}/v1:${u.kind}`, bare)).toEqual(plainPod(spec));
      }),
      { numRuns: 60 },
    );
  });

  it("a built-in Kind name in a custom group is read by shape, not by the built-in path", () => {
    const spec = copy(safePodSpec());
    (c0(spec).securityContext as Obj).privileged = true;
    const props = { spec: { runner: { template: { spec } } } };
    expect(verdict("kubernetes:ci.example.com/v1:Deployment", props)).toContain(
      "sandbox-disallow-privileged",
    );
    expect(workloads("kubernetes:ci.example.com/v1:Deployment", props).map((w) => w.origin.name)).toEqual([
      "r",
    ]);
  });

  it("a carrier with several pods yields one view per pod, named <name>/<path>", () => {
    const bad = copy(safePodSpec());
    bad.hostPID = true;
    const props = {
      spec: {
        headGroupSpec: { template: { spec: copy(safePodSpec()) } },
        workerGroupSpecs: [{ replicas: 3, template: { spec: bad } }],
      },
    };
    const views = workloads("kubernetes:ray.io/v1:RayCluster", props);
    expect(views.map((v) => v.origin.name)).toEqual([
      "r/spec.headGroupSpec.template",
      "r/spec.workerGroupSpecs[0].template",
    ]);
    const hostNs = views.map(
      (v) => judge(v).find((r) => r.rule.id === "sandbox-disallow-host-namespaces")?.findings ?? [],
    );
    expect(hostNs[0]).toEqual([]);
    expect(hostNs[1]?.map((f) => f.path)).toEqual(["spec.workerGroupSpecs[0].template.spec.hostPID"]);
    expect(views[1]?.subject === "workload" ? views[1].replicas : undefined).toBe(3);
  });
});
