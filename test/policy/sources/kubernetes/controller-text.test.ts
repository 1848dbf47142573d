/** The controller's reading of embedded text: Go's case-insensitive decoding, podSpecPatch text, and templating. */
import { describe, expect, it } from "vitest";
import { readPodSpecPatch } from "../../../../policy/sources/kubernetes/crd-argo";
import { goDecode, goFold } from "../../../../policy/sources/kubernetes/go-json";
import { sealPlaceholders, substitute, tektonValues } from "../../../../policy/sources/kubernetes/templating";
import { argoTemplateValues } from "../../../../policy/sources/kubernetes/templating-argo";
import { isUnreadable, UNKNOWN } from "../../../../policy/workload";

describe("Go's decoding into the Kubernetes types", () => {
  it("matches keys to fields in any case, the Kelvin sign and long s folded", () => {
    expect(
      goDecode({ SecurityContext: { PRIVILEGED: true }, hostNetwor\u212a: true, ho\u017ftPID: true }),
    ).toEqual({
      securityContext: { privileged: true },
      hostNetwork: true,
      hostPID: true,
    });
  });
  it("decodes keys of one field in byte order, each into what the one before left", () => {
    expect(
      goDecode({ securityContext: { runAsUser: 1000 }, SecurityContext: { privileged: true, runAsUser: 0 } }),
    ).toEqual({
      securityContext: { privileged: true, runAsUser: 1000 },
    });
    expect(
      goDecode({ containers: [{ name: "main" }], Containers: [{ name: "x", privileged: true }] }),
    ).toEqual({
      containers: [{ name: "main", privileged: true }],
    });
  });
  it("keeps the user's keys of labels and quantities as written", () => {
    expect(goDecode({ Labels: { Privileged: "x" }, resources: { Limits: { CPU: "1" } } })).toEqual({
      labels: { Privileged: "x" },
      resources: { limits: { CPU: "1" } },
    });
  });
});

describe("a podSpecPatch's text", () => {
  it("reads YAML 1.1 (merge keys, yes) and JSON", () => {
    expect(readPodSpecPatch("a: &s {privileged: yes}\nsecurityContext:\n  <<: *s", new Map())).toEqual({
      value: { a: { privileged: true }, securityContext: { privileged: true } },
    });
    expect(readPodSpecPatch('{"hostPID": true}', new Map())).toEqual({ value: { hostPID: true } });
  });
  it("substitutes declared values and keeps what is left as text, quoted or not", () => {
    const values = new Map([["inputs.parameters.a", "true"]]);
    expect(
      readPodSpecPatch("hostPID: {{inputs.parameters.a}}\nx: {{ inputs.parameters.b }}", values),
    ).toEqual({
      value: { hostPID: true, x: "{{ inputs.parameters.b }}" },
    });
    expect(readPodSpecPatch('{"x": {{inputs.parameters.b}}}', values)).toEqual({
      value: { x: "{{inputs.parameters.b}}" },
    });
  });
  it("refuses a patch that is one parameter, does not parse, or has directives", () => {
    for (const raw of ["{{workflow.parameters.p}}", "{bad", "containers:\n  - $patch: replace"])
      expect(readPodSpecPatch(raw, new Map())).toHaveProperty("reason");
  });
});

describe("controller templating", () => {
  it("Argo values: workflow arguments, and input defaults unless a caller passes another value; a callable template's only by an enum of one", () => {
    const wf = {
      entrypoint: "main",
      arguments: { parameters: [{ name: "w", value: "1" }] },
      templates: [
        {
          name: "main",
          steps: [[{ name: "s", template: "t", arguments: { parameters: [{ name: "p", value: "true" }] } }]],
        },
        {
          name: "t",
          inputs: {
            parameters: [
              { name: "p", default: "false" },
              { name: "q", default: "x" },
            ],
          },
        },
      ],
    };
    const v = argoTemplateValues(wf, wf.templates[1], false);
    expect(v.get("workflow.parameters.w")).toBe("1");
    expect(v.get("inputs.parameters.p")).toBe("true");
    expect(v.get("inputs.parameters.q")).toBe("x");
    // A WorkflowTemplate's templates may be called from outside with any arguments, and its workflow parameters are
    // replaced at submission: none is known, but a workflow parameter whose enum allows one value.
    const callable = argoTemplateValues(wf, wf.templates[1], true);
    expect([...callable.keys()]).toEqual([]);
    const one = { ...wf, arguments: { parameters: [{ name: "w", value: "1", enum: ["1"] }] } };
    expect([...argoTemplateValues(one, wf.templates[1], true)]).toEqual([["workflow.parameters.w", "1"]]);
    const two = { ...wf, arguments: { parameters: [{ name: "w", value: "1", enum: ["1", "2"] }] } };
    expect(argoTemplateValues(two, wf.templates[1], true).size).toBe(0);
  });
  it("folds keys as encoding/json does: simple case folding, one character for one", () => {
    // The Kelvin sign, the long s and the dotless i fold to ASCII letters; ligatures and the sharp s fold to none.
    expect(goFold("\u212aind")).toBe(goFold("kind"));
    expect(goFold("ho\u017ftNetwork")).toBe(goFold("hostNetwork"));
    expect(goFold("pr\u0131vileged")).toBe(goFold("PRIVILEGED"));
    expect(goFold("ho\ufb06Network")).not.toBe(goFold("hostNetwork"));
    expect(goFold("seccompPro\ufb01le")).not.toBe(goFold("seccompProfile"));
    expect(goFold("\u00df")).toBe(goFold("\u1e9e"));
    expect(goFold("\u00df")).not.toBe(goFold("ss"));
    // A null leaves a value another spelling of the field set.
    expect(goDecode({ HostNetwork: true, hostNetwork: null })).toEqual({ hostNetwork: true });
  });
  it("Tekton values: defaults under the run's values, every spelling of a param reference", () => {
    const v = tektonValues([{ name: "a", default: "x" }, { name: "b" }], [{ name: "b", value: "y" }]);
    expect(
      substitute(`$(params.a) $(params["b"]) $(params['a']) $(inputs.params.b) $(params.c)`, "tekton", v),
    ).toBe("x y x y $(params.c)");
  });
  it("Tekton values: an array param's elements and an object param's keys, a run's value replacing all of it", () => {
    const v = tektonValues(
      [
        { name: "list", type: "array", default: ["a", "b"] },
        { name: "obj", type: "object", default: { k: "v" } },
        { name: "gone", type: "array", default: ["old"] },
      ],
      [
        { name: "obj", value: { k: "w", j: "z" } },
        { name: "gone", value: ["$(params.unknown)"] },
      ],
    );
    expect(
      substitute(
        "$(params.list[*]) $(params.list[1]) $(params.obj.k) $(params.obj.j) $(params.gone[0])",
        "tekton",
        v,
      ),
    ).toBe("a b b w z $(params.gone[0])");
    // A pipeline param passed into a task param's array.
    const outer = new Map([["greeting", "hi"]]);
    expect(tektonValues([], [{ name: "l", value: ["$(params.greeting)", "x"] }], outer).get("l[*]")).toBe(
      "hi x",
    );
    // A pipeline's whole array param passed to a task's array param keeps its elements.
    const list = tektonValues([{ name: "arr", default: ["--a", "--b"] }], []);
    const passed = tektonValues([], [{ name: "flags", value: "$(params.arr[*])" }], list);
    expect([passed.get("flags[*]"), passed.get("flags[1]")]).toEqual(["--a --b", "--b"]);
  });
  it("a placeholder left is text in a name or command, not known in a resource figure, unreadable in a wall", () => {
    const pod = sealPlaceholders(
      {
        spec: {
          containers: [
            {
              name: "{{x}}",
              args: ["{{x}}"],
              resources: { limits: { cpu: "{{x}}" } },
              securityContext: { privileged: "{{x}}" },
            },
          ],
          volumes: [{ name: "v", hostPath: { path: "{{x}}" } }],
        },
      },
      "argo",
      "workflow",
    );
    const c = pod.spec.containers[0];
    expect([c?.name, c?.args[0], c?.resources.limits.cpu]).toEqual(["{{x}}", "{{x}}", UNKNOWN]);
    expect(isUnreadable(c?.securityContext.privileged)).toBe(true);
    expect(isUnreadable(pod.spec.volumes[0]?.hostPath.path)).toBe(true);
  });
});
