/**
 * The pack and `scan` give the same verdict on every generated case: a workload built from random mixes of safe
 * and dangerous settings is judged by the CrossGuard pack (remediations then validations, as the engine runs them)
 * and by `scan` of the same object written as a Kubernetes manifest (YAML and JSON), a `pulumi preview --json` and
 * a `pulumi stack export`; the mandatory rule ids and messages must match.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { CARRIERS, copy, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../policy/fixtures";
import { engineRun } from "../policy/harness";
import { mandatoryVerdict, scanMandatory } from "./helpers";

/** One change to a safe pod spec's first container or the pod itself. */
const podChange = fc.oneof(
  fc.record({ privileged: fc.boolean() }).map((x) => ({ c: { securityContext: x } })),
  fc
    .constantFrom(0, 1000, 65534)
    .map((u) => ({ c: { securityContext: { runAsUser: u } }, p: { securityContext: { runAsUser: u } } })),
  fc.boolean().map((b) => ({ c: { securityContext: { allowPrivilegeEscalation: b } } })),
  fc
    .subarray(["NET_ADMIN", "SYS_ADMIN", "NET_BIND_SERVICE", "CHOWN"], { minLength: 1 })
    .map((add) => ({ c: { securityContext: { capabilities: { add, drop: ["ALL"] } } } })),
  fc
    .subarray(["NET_RAW", "MKNOD", "ALL", "NET_ADMIN"])
    .map((drop) => ({ c: { securityContext: { capabilities: { drop } } } })),
  fc.constantFrom("Unconfined", "RuntimeDefault").map((type) => ({
    c: { securityContext: { seccompProfile: { type } } },
  })),
  fc.boolean().map((b) => ({ p: { hostNetwork: b } })),
  fc.boolean().map((b) => ({ p: { hostPID: b } })),
  fc
    .constantFrom("/var/run/docker.sock", "/etc", "/var/lib/sandbox-projects/demo/jobs/1", "/run/containerd")
    .map((path) => ({ hostPath: path })),
  fc
    .constantFrom(["GITHUB_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"], ["LANG", "C"])
    .map(([name, value]) => ({
      env: { name, value },
    })),
  fc.constant({ c: { ports: [{ containerPort: 80, hostPort: 8080 }] } }),
);

type Change = { c?: Record<string, unknown>; p?: Record<string, unknown>; hostPath?: string; env?: unknown };

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    out[k] =
      typeof v === "object" && v !== null && !Array.isArray(v) && typeof cur === "object" && cur !== null
        ? merge(cur as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

function podSpec(changes: readonly Change[]): Record<string, unknown> {
  let spec = copy(safePodSpec());
  let c = copy(safeK8sContainer());
  for (const ch of changes) {
    if (ch.c !== undefined) c = merge(c, ch.c);
    if (ch.p !== undefined) spec = merge(spec, ch.p);
    if (ch.env !== undefined) c.env = [...((c.env as unknown[]) ?? []), ch.env];
    if (ch.hostPath !== undefined) {
      spec.volumes = [...(spec.volumes as unknown[]), { name: "host", hostPath: { path: ch.hostPath } }];
      c.volumeMounts = [...(c.volumeMounts as unknown[]), { name: "host", mountPath: "/host" }];
    }
  }
  spec.containers = [c];
  return spec;
}

/** How many generated cases the pack refused: the property must judge dangerous cases, not only safe ones. */
let refused = 0;

function packOf(type: string, props: Record<string, unknown>, name: string): string[] {
  const { outcome } = engineRun(type, props, { name });
  const verdict = mandatoryVerdict(outcome.violations.map((v) => ({ rule: v.policy, message: v.message })));
  if (verdict.length > 0) refused++;
  return verdict;
}

function kubeManifest(type: string, props: Record<string, unknown>): Record<string, unknown> {
  const [, gv = "", kind = ""] = /^kubernetes:(.+):([^:]+)$/.exec(type) ?? [];
  return { apiVersion: gv.startsWith("core/") ? gv.slice(5) : gv, kind, ...props };
}

describe("the pack and scan agree on generated workloads", () => {
  it("Kubernetes carriers, as YAML, JSON, a preview and a stack export", async () => {
    refused = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...CARRIERS.filter((c) => !c.type.includes("agents.x-k8s.io"))),
        fc.array(podChange, { maxLength: 4 }),
        async (carrier, changes) => {
          const props = carrier.build(podSpec(changes as Change[]));
          const name = ((props.metadata as { name?: string } | undefined)?.name ?? "obj") as string;
          const withName = { ...props, metadata: { ...((props.metadata as object) ?? {}), name } };
          const pack = packOf(carrier.type, withName, name);
          const manifest = kubeManifest(carrier.type, withName);
          expect(await scanMandatory("m.yaml", stringify(manifest)), "YAML").toEqual(pack);
          expect(await scanMandatory("m.json", JSON.stringify(manifest)), "JSON").toEqual(pack);
          const urn = `urn:pulumi:dev::p::${carrier.type}::${name}`;
          const state = { urn, type: carrier.type, custom: true, inputs: withName };
          expect(
            await scanMandatory(
              "p.json",
              JSON.stringify({ steps: [{ op: "create", urn, newState: state }] }),
            ),
            "preview",
          ).toEqual(pack);
          expect(
            await scanMandatory("s.json", JSON.stringify({ version: 3, deployment: { resources: [state] } })),
            "stack export",
          ).toEqual(pack);
        },
      ),
      { numRuns: 60 },
    );
    expect(refused).toBeGreaterThan(20);
  });

  it("Docker containers, as a preview and a stack export", async () => {
    const change = fc.oneof(
      fc.boolean().map((privileged) => ({ privileged })),
      fc.constantFrom("host", "none", "bridge", "container:db").map((networkMode) => ({ networkMode })),
      fc.constantFrom("0", "root", "1000:1000", "1000:0").map((user) => ({ user })),
      fc
        .constantFrom(["seccomp=unconfined"], ["no-new-privileges:true"], [])
        .map((securityOpts) => ({ securityOpts })),
      fc.constantFrom(["NET_RAW"], ["ALL"]).map((drops) => ({ capabilities: { drops } })),
      fc
        .constantFrom("/var/run/docker.sock", "/", "/var/lib/sandbox-projects/demo/jobs/2")
        .map((source) => ({ mounts: [{ type: "bind", source, target: "/x" }] })),
      fc.constant({ ports: [{ internal: 80, external: 8080 }] }),
    );
    refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(change, { maxLength: 4 }), async (changes) => {
        let props = safeContainer();
        for (const ch of changes) props = { ...props, ...ch };
        const pack = packOf(DOCKER, props, "t");
        const urn = `urn:pulumi:dev::p::${DOCKER}::t`;
        const state = { urn, type: DOCKER, custom: true, inputs: props };
        expect(
          await scanMandatory("p.json", JSON.stringify({ steps: [{ op: "create", urn, newState: state }] })),
        ).toEqual(pack);
        expect(
          await scanMandatory("s.json", JSON.stringify({ version: 3, deployment: { resources: [state] } })),
        ).toEqual(pack);
      }),
      { numRuns: 60 },
    );
    expect(refused).toBeGreaterThan(20);
  });
});
