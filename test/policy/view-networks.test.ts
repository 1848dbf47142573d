/**
 * The workload view carries what the stack rules judge a workload's network by: a Docker container's networks as
 * the engine joins them, and a pod's own labels and namespace (what NetworkPolicies select it by).
 */
import { describe, expect, it } from "vitest";
import { adaptResources } from "../../policy/sources/subject";
import { UNKNOWN, Unreadable, type WorkloadView } from "../../policy/workload";
import { argoWorkflow } from "./carrier-kinds";
import { copy, DOCKER, safeContainer } from "./fixtures";

function views(type: string, props: unknown, name = "x"): WorkloadView[] {
  return adaptResources(type, props, name).filter((s): s is WorkloadView => s.subject === "workload");
}

function docker(extra: Record<string, unknown>): WorkloadView {
  const p = copy(safeContainer());
  delete p.networkMode;
  const [w] = views(DOCKER, { ...p, ...extra });
  if (w === undefined) throw new Error("no view");
  return w;
}

describe("a Docker container's networks", () => {
  it("are its network mode, the engine's bridge when unset or empty, then each networksAdvanced entry", () => {
    expect(docker({}).networks).toEqual([{ name: "bridge", path: "networkMode", driver: undefined }]);
    expect(docker({ networkMode: "" }).networks?.[0]?.name).toBe("bridge");
    expect(
      docker({
        networkMode: "inner",
        networksAdvanced: [
          { name: "outer", aliases: ["a"] },
          { name: "lan", driver: "macvlan" },
        ],
      }).networks,
    ).toEqual([
      { name: "inner", path: "networkMode", driver: undefined },
      { name: "outer", path: "networksAdvanced[0]", driver: undefined },
      { name: "lan", path: "networksAdvanced[1]", driver: "macvlan" },
    ]);
  });

  it("keep what is not known or not readable, entry by entry or as the whole list", () => {
    expect(docker({ networkMode: UNKNOWN }).networks).toEqual([
      { name: UNKNOWN, path: "networkMode", driver: undefined },
    ]);
    expect(docker({ networkMode: "none", networksAdvanced: UNKNOWN }).networks?.[1]).toEqual({
      name: UNKNOWN,
      path: "networksAdvanced",
      driver: undefined,
    });
    const secret = new Unreadable("it is a Pulumi secret, whose value the policy cannot see");
    expect(docker({ networksAdvanced: [{ name: secret }] }).networks?.[1]?.name).toBe(secret);
  });

  it("give the networks on the host's own LAN from the same reading", () => {
    const w = docker({
      networksAdvanced: [{ name: "inner" }, { driver: "ipvlan" }, { name: "lan", driver: "macvlan" }],
    });
    expect(w.hostLanNetworks).toEqual([
      { name: "#1", driver: "ipvlan", path: "networksAdvanced[1]" },
      { name: "lan", driver: "macvlan", path: "networksAdvanced[2]" },
    ]);
  });
});

describe("a pod's labels and namespace", () => {
  it("are the pod template's labels, not the carrier's, and the carrier's namespace", () => {
    const [w] = views("kubernetes:apps/v1:Deployment", {
      metadata: { namespace: "team", labels: { owner: "deployment" } },
      spec: { template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c" }] } } },
    });
    expect(w?.podLabels).toEqual({ app: "web" });
    expect(w?.podNamespace).toBe("team");
    expect(w?.labels).toEqual({ owner: "deployment", app: "web" });
  });

  it("take the namespace from the custom resource a pod is rebuilt from, and keep label text as written", () => {
    const wf = argoWorkflow({ containers: [{ name: "main", image: "x:1" }] });
    const spec = wf.spec as { templates: Record<string, unknown>[] };
    // A label whose key is a view key that holds paths: label text is never mapped back as a path.
    const labels = { path: "spec.containers[0]", app: "wf" };
    spec.templates = spec.templates.map((t) => (t.name === "main" ? { ...t, metadata: { labels } } : t));
    const [w] = views("kubernetes:argoproj.io/v1alpha1:Workflow", {
      ...wf,
      metadata: { ...(wf.metadata as object), namespace: "ci" },
    });
    expect(w?.podNamespace).toBe("ci");
    expect(w?.podLabels).toEqual(labels);
    expect(w?.containers[0]?.path).not.toBe("spec.containers[0]");
  });

  it("are unknown or unreadable as the label map is", () => {
    const pod = (labels: unknown) =>
      views("kubernetes:core/v1:Pod", { metadata: { labels }, spec: { containers: [{ name: "c" }] } })[0];
    expect(pod(UNKNOWN)?.podLabels).toBe(UNKNOWN);
    expect(pod(["app=web"])?.podLabels).toBeInstanceOf(Unreadable);
    expect(pod(undefined)?.podLabels).toBeUndefined();
    expect(pod(undefined)?.podNamespace).toBeUndefined();
  });
});
