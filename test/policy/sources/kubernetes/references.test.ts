/**
 * References between objects of one set (policy/sources/kubernetes/references.ts, spo-seccomp.ts) and the stack rule
 * that judges them (policy/stack/disallow-unjudged-references.ts): what the controller puts in place, what fails
 * closed, and that the objects pass when what they reference is hardened.
 */
import { describe, expect, it } from "vitest";
import { pathFrom, RefIndex, resolveReferences } from "../../../../policy/sources/kubernetes/references";
import {
  operatorFile,
  profilesNamed,
  seccompProfiles,
  spoProfileProblem,
} from "../../../../policy/sources/kubernetes/spo-seccomp";
import { checkReferences } from "../../../../policy/stack/disallow-unjudged-references";
import { UNKNOWN } from "../../../../policy/workload";

const TEKTON = "kubernetes:tekton.dev/v1:";
const ARGO = "kubernetes:argoproj.io/v1alpha1:";
const SPO = "kubernetes:security-profiles-operator.x-k8s.io/v1beta1:SeccompProfile";

const hardened = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  seccompProfile: { type: "RuntimeDefault" },
  capabilities: { drop: ["ALL"] },
};
const task = (name: string, step: object = {}) => ({
  type: `${TEKTON}Task`,
  name,
  urn: `t/${name}`,
  props: {
    metadata: { name },
    spec: {
      params: [{ name: "msg", default: "hi" }],
      steps: [
        {
          name: "run",
          image: "busybox:1.36",
          script: 'echo "$(params.msg)"',
          computeResources: { limits: { cpu: "1", memory: "1Gi" } },
          securityContext: hardened,
          ...step,
        },
      ],
    },
  },
});
const run = (spec: object, kind = "TaskRun") => ({
  type: `${TEKTON}${kind}`,
  name: "run",
  urn: "r/run",
  props: { metadata: { name: "run" }, spec },
});

describe("references resolved from the set", () => {
  it("a TaskRun's taskRef becomes its taskSpec; a Task of another namespace does not answer it", () => {
    const t = task("build");
    const r = run({ taskRef: { name: "build" } });
    const res = resolveReferences(r.type, r.props, new RefIndex([t, r]));
    expect(res?.unresolved).toEqual([]);
    expect((res?.props as { spec: { taskSpec: unknown } } | undefined)?.spec.taskSpec).toEqual(t.props.spec);
    expect(res?.used).toEqual([{ at: "spec.taskSpec", from: 'Task "build" spec', ref: "spec.taskRef" }]);
    const other = { ...t, props: { ...t.props, metadata: { name: "build", namespace: "b" } } };
    const mine = { ...r, props: { ...r.props, metadata: { name: "run", namespace: "a" } } };
    expect(resolveReferences(mine.type, mine.props, new RefIndex([other]))?.unresolved[0]?.path).toBe(
      "spec.taskRef",
    );
  });

  it("a step's StepAction gives its image, securityContext and script, its params substituted from the step", () => {
    const t = task("build", {
      image: undefined,
      script: undefined,
      ref: { name: "sa" },
      params: [{ name: "m", value: "x" }],
    });
    const sa = {
      type: "kubernetes:tekton.dev/v1beta1:StepAction",
      name: "sa",
      urn: "s",
      props: {
        metadata: { name: "sa" },
        spec: {
          params: [{ name: "m", default: "d" }],
          image: "alpine:3",
          script: "echo $(params.m)",
          securityContext: { privileged: true },
        },
      },
    };
    const res = resolveReferences(t.type, t.props, new RefIndex([sa]));
    const step = (res?.props as { spec: { steps: Record<string, unknown>[] } } | undefined)?.spec.steps[0];
    expect(step).toMatchObject({
      image: "alpine:3",
      script: "echo x",
      securityContext: { privileged: true },
    });
    expect(step).not.toHaveProperty("ref");
    expect(pathFrom("spec.steps[0].securityContext", res?.used ?? [])).toBe(
      'StepAction "sa" spec.securityContext',
    );
  });

  it("resolvers, bundles, custom tasks and parameter names fail closed; a preview unknown is a note", () => {
    const idx = new RefIndex([task("build")]);
    const why = (ref: unknown) => resolveReferences(`${TEKTON}TaskRun`, { spec: { taskRef: ref } }, idx);
    expect(why({ resolver: "git" })?.unresolved[0]?.path).toBe("spec.taskRef.resolver");
    expect(why({ name: "build", bundle: "r/x:1" })?.unresolved[0]?.path).toBe("spec.taskRef.bundle");
    expect(why({ name: "build", apiVersion: "x.dev/v1", kind: "Wait" })?.unresolved[0]?.reason).toMatch(
      /custom task/,
    );
    expect(why({ name: "$(params.t)" })?.unresolved[0]?.reason).toMatch(/parameter/);
    expect(why({ name: UNKNOWN })?.unknown).toEqual(["spec.taskRef"]);
  });

  it("an Argo workflowTemplateRef joins the template's spec under the workflow's, the workflow's fields winning", () => {
    const wft = {
      type: `${ARGO}WorkflowTemplate`,
      name: "t",
      props: {
        metadata: { name: "t" },
        spec: {
          entrypoint: "main",
          hostNetwork: false,
          templates: [
            { name: "main", container: { image: "a" } },
            { name: "b", container: { image: "b" } },
          ],
        },
      },
    };
    const wf = {
      metadata: { name: "w" },
      spec: {
        workflowTemplateRef: { name: "t" },
        hostNetwork: true,
        templates: [{ name: "b", container: { image: "mine" } }],
      },
    };
    const res = resolveReferences(`${ARGO}Workflow`, wf, new RefIndex([wft]));
    const spec = (res?.props as { spec: Record<string, unknown> } | undefined)?.spec;
    expect(spec?.hostNetwork).toBe(true);
    expect(spec?.workflowTemplateRef).toBeUndefined();
    expect(spec?.templates).toEqual([
      { name: "main", container: { image: "a" } },
      { name: "b", container: { image: "mine" } },
    ]);
  });

  it("an Argo templateRef adds the named object's templates to the caller; clusterScope names a ClusterWorkflowTemplate", () => {
    const cwft = {
      type: `${ARGO}ClusterWorkflowTemplate`,
      name: "c",
      props: { metadata: { name: "c" }, spec: { templates: [{ name: "x", container: { image: "a" } }] } },
    };
    const wf = {
      spec: {
        templates: [
          {
            name: "main",
            steps: [[{ name: "s", templateRef: { name: "c", template: "x", clusterScope: true } }]],
          },
        ],
      },
    };
    const res = resolveReferences(`${ARGO}Workflow`, wf, new RefIndex([cwft]));
    expect((res?.props as { spec: { templates: unknown[] } } | undefined)?.spec.templates).toHaveLength(2);
    const none = resolveReferences(`${ARGO}Workflow`, wf, new RefIndex([]));
    expect(none?.unresolved[0]?.reason).toMatch(/ClusterWorkflowTemplate "c", which is not in the input/);
  });
});

describe("Security Profiles Operator seccomp profiles", () => {
  const prof = (name: string, spec: object, namespace?: string) => ({
    type: SPO,
    props: { metadata: { name, ...(namespace === undefined ? {} : { namespace }) }, spec },
  });

  it("names the operator's file as the kubelet joins the path", () => {
    expect(operatorFile("operator/ns/p.json")).toEqual({ namespace: "ns", file: "p.json" });
    expect(operatorFile("./operator//p.json")).toEqual({ file: "p.json" });
    expect(operatorFile("../seccomp/operator/ns/p.json")).toEqual({ namespace: "ns", file: "p.json" });
    expect(operatorFile("profiles/p.json")).toBeUndefined();
    const ps = seccompProfiles([prof("p", {}, "ns"), prof("q.json", {})]);
    expect(profilesNamed("operator/ns/p.json", ps).map((p) => p.name)).toEqual(["p"]);
    expect(profilesNamed("operator/other/p.json", ps)).toEqual([]);
    expect(profilesNamed("operator/q.json", ps).map((p) => p.name)).toEqual(["q.json"]);
  });

  it("judges the content with its base chain: permissive, unreadable bases and loops fail; strict passes", () => {
    const strict = {
      defaultAction: "SCMP_ACT_ERRNO",
      syscalls: [{ action: "SCMP_ACT_ALLOW", names: ["read"] }],
    };
    const ps = seccompProfiles([
      prof("a", { ...strict, baseProfileName: "b" }),
      prof("b", {
        defaultAction: "SCMP_ACT_ERRNO",
        syscalls: [{ action: "SCMP_ACT_ALLOW", names: ["unshare"] }],
      }),
      prof("c", { ...strict, baseProfileName: "oci://r/x" }),
      prof("d", { ...strict, baseProfileName: "e" }),
      prof("e", { ...strict, baseProfileName: "d" }),
      prof("f", strict),
      prof("g", { defaultAction: "SCMP_ACT_LOG" }),
    ]);
    const problem = (n: string) =>
      spoProfileProblem(ps.find((p) => p.name === n) ?? { name: n, namespace: undefined, props: {} }, ps);
    expect(problem("a")).toMatch(/unshare/);
    expect(problem("c")).toMatch(/registry/);
    expect(problem("d")).toMatch(/loop/);
    expect(problem("f")).toBeUndefined();
    expect(problem("g")).toMatch(/SCMP_ACT_LOG/);
  });

  it("the stack rule refuses a pod naming a permissive shipped profile, and passes a strict one", () => {
    const pod = (file: string) => ({
      type: "kubernetes:core/v1:Pod",
      name: "p",
      urn: "p",
      props: {
        metadata: { name: "p", namespace: "ns" },
        spec: {
          containers: [
            {
              name: "m",
              image: "i",
              securityContext: { seccompProfile: { type: "Localhost", localhostProfile: file } },
            },
          ],
        },
      },
    });
    const set = [
      { ...prof("loose", { defaultAction: "SCMP_ACT_ALLOW" }, "ns"), name: "loose", urn: "l" },
      { ...prof("tight", { defaultAction: "SCMP_ACT_ERRNO" }, "ns"), name: "tight", urn: "t" },
    ];
    const loose = checkReferences([...set, pod("operator/ns/loose.json")]);
    expect(loose.map((f) => f.message).join()).toMatch(/SeccompProfile "loose".*SCMP_ACT_ALLOW/);
    expect(loose[0]?.path).toBe("spec.containers[0].securityContext.seccompProfile");
    expect(checkReferences([...set, pod("operator/ns/tight.json")])).toEqual([]);
    expect(checkReferences([...set, pod("node/own.json")])).toEqual([]);
  });
});
