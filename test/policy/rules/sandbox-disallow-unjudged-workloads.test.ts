/**
 * sandbox-disallow-unjudged-workloads: an object that may start containers no rule can read fails closed. Provider
 * types that build or run outside every wall (image builds, swarm services, plugins, commands), Pulumi types that
 * apply content the pack never sees (Helm, YAML groups, kustomizations, patches), the in-cluster objects that deploy
 * from elsewhere (each by its API group), and unknown kinds that name a container image with container settings.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { engineRun, type Outcome, secret, UNKNOWN_WIRE, validate, validateStack, violated } from "../harness";

const RULE = "sandbox-disallow-unjudged-workloads";
const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const OPAQUE = { metadata: { name: "x" }, spec: { chart: "x" } };

async function scanned(files: Record<string, string>, args: string[], name: string) {
  const dir = tempFiles(files);
  const { code, report } = await scanJson(args, undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  const mineOf = report.findings.filter((f) => f.ruleId === RULE && f.resource.name === name);
  return { code, rules: rulesOf(report, name), messages: violationsOf(report, name), findings: mineOf };
}
const manifest = (apiVersion: string, kind: string, rest: object = {}) =>
  JSON.stringify({ apiVersion, kind, metadata: { name: "app" }, ...rest });

describe(RULE, () => {
  it("passes (does not apply to) the hardened docker.Container and the hardened Pod, Deployment and Job", () => {
    const d = validate(DOCKER, safeContainer());
    expect(violated(d)).not.toContain(RULE);
    expect(d.notApplicable).toContain(RULE);
    for (const kind of ["Pod", "Deployment", "Job"]) {
      const c = carrier(kind);
      expect(violated(validate(c.type, c.build(safePodSpec()))), kind).not.toContain(RULE);
    }
  });

  it.each([
    [
      "docker:index/image:Image",
      /^Image "fixture" may create workloads the rules cannot judge: builds an image: the build's RUN steps/,
    ],
    [
      "docker:index/service:Service",
      /: a Docker swarm service runs containers whose task spec no rule reads$/,
    ],
    ["docker:index/plugin:Plugin", /: installs and enables a Docker plugin/],
    ["docker:index/buildxBuilder:BuildxBuilder", /: starts a BuildKit builder/],
    ["docker-build:index:Image", /: builds an image with BuildKit/],
    [
      "command:local:Command",
      /^Command "fixture" .*: runs a command on the deployer's machine, outside every wall$/,
    ],
    ["command:remote:Command", /: runs a command on a remote host over SSH/],
    ["command:remote:CopyFile", /: copies a file to a remote host over SSH/],
    ["command:remote:CopyToRemote", /: copies files or folders to a remote host over SSH/],
  ])("refuses the provider type %s", (type, re) => {
    const m = mine(validate(type, { name: "x" }));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["kubernetes:helm.sh/v3:Release", "a Helm release installs a chart's objects inside the provider"],
    ["kubernetes:helm.sh/v4:Chart", "a Helm chart renders objects from a chart the pack does not read"],
    ["kubernetes:yaml:ConfigGroup", "a YAML config group or file applies manifests"],
    ["kubernetes:yaml/v2:ConfigFile", "a YAML config group or file applies manifests"],
    ["kubernetes:kustomize:Directory", "a kustomization applies manifests"],
    ["kubernetes:kustomize/v2:Directory", "a kustomization applies manifests"],
    ["kubernetes:apps/v1:DeploymentPatch", "a patch changes a live object the pack cannot see whole"],
    ["kubernetes:core/v1:PodPatch", "a patch changes a live object"],
  ])("refuses the Pulumi Kubernetes type %s", (type, why) => {
    expect(mine(validate(type, OPAQUE))).toEqual([expect.stringContaining(why)]);
  });

  it.each([
    ["kustomize.config.k8s.io/v1beta1", "Kustomization", "kubectl apply -k builds it"],
    ["kustomize.config.k8s.io/v1alpha1", "Component", "kubectl apply -k builds it"],
    ["kustomize.toolkit.fluxcd.io/v1", "Kustomization", "Flux builds and applies"],
    ["helm.toolkit.fluxcd.io/v2", "HelmRelease", "Flux installs the chart"],
    ["argoproj.io/v1alpha1", "Application", "Argo CD syncs"],
    ["argoproj.io/v1alpha1", "ApplicationSet", "Argo CD syncs"],
    ["helm.cattle.io/v1", "HelmChart", "the Helm controller installs the chart"],
    ["fleet.cattle.io/v1alpha1", "GitRepo", "Fleet deploys"],
    ["fleet.cattle.io/v1alpha1", "Bundle", "Fleet deploys"],
    ["fleet.cattle.io/v1alpha1", "HelmOp", "Fleet deploys"],
    ["kappctrl.k14s.io/v1alpha1", "App", "kapp-controller fetches"],
    ["packaging.carvel.dev/v1alpha1", "PackageInstall", "kapp-controller installs a package"],
  ])("refuses %s %s, which deploys content from elsewhere", (gv, kind, why) => {
    expect(mine(validate(`kubernetes:${gv}:${kind}`, OPAQUE))).toEqual([
      expect.stringMatching(
        new RegExp(`^${kind} "fixture" may create workloads the rules cannot judge: ${why}`),
      ),
    ]);
  });

  it("names the privileges a plugin's config.json asks for", () => {
    expect(mine(validate("docker:engine:PluginConfig", { privileges: ["CAP_SYS_ADMIN"] }))).toEqual([
      expect.stringMatching(/the privileges its config\.json lists \(CAP_SYS_ADMIN\)$/),
    ]);
  });

  it.each([
    ["a runner", { spec: { runner: { image: "evil:1", command: ["sh"] } } }, "spec.runner"],
    ["a list entry", { spec: { steps: [{ image: "evil:1", env: [] }] } }, "spec.steps[0]"],
    ["the top level", { image: "evil:1", securityContext: {} }, "the top level"],
  ])("refuses an unknown kind that names a container image at %s", (_, props, at) => {
    expect(mine(validate("kubernetes:example.com/v1:Runner", props))).toEqual([
      `Runner "fixture" may create workloads the rules cannot judge: it names a container image at ${at}, but no pod spec the rules can read`,
    ]);
  });

  describe("a generic CustomResource (kubernetes:apiextensions.k8s.io:CustomResource)", () => {
    // The provider sends the object its apiVersion and kind inputs name; the token says nothing about the kind.
    const GENERIC = "kubernetes:apiextensions.k8s.io:CustomResource";
    const TYPED = "kubernetes:agents.x-k8s.io/v1beta1:Sandbox";
    const sandbox = (apiVersion: unknown = "agents.x-k8s.io/v1beta1", kind: unknown = "Sandbox") => ({
      apiVersion,
      kind,
      metadata: { name: "x", namespace: "sbx" },
      spec: { podTemplate: { spec: { ...safePodSpec(), restartPolicy: "Never" } } },
    });

    it("is judged as the kind its apiVersion and kind name, in the resource and the stack policies alike", () => {
      const typed = validate(TYPED, sandbox());
      expect(violated(validate(GENERIC, sandbox()))).toEqual(violated(typed));
      expect(violated(typed)).not.toContain(RULE);
      const stack = (type: string) => violated(validateStack([{ type, name: "x", props: sandbox() }]));
      expect(stack(GENERIC)).toEqual(stack(TYPED));
    });

    it("keeps the walls of the kind it names", () => {
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "x" },
        spec: { ...safePodSpec(), hostNetwork: true },
      };
      expect(violated(validate(GENERIC, pod))).toContain("sandbox-disallow-host-namespaces");
      const hr = { apiVersion: "helm.toolkit.fluxcd.io/v2", kind: "HelmRelease", metadata: { name: "x" } };
      expect(mine(validate(GENERIC, hr))).toEqual([
        expect.stringMatching(
          /^HelmRelease "fixture" may create workloads the rules cannot judge: Flux installs/,
        ),
      ]);
      expect(violated(validate(GENERIC, sandbox("agents.x-k8s.io/v1alpha1")))).toContain(
        "sandbox-disallow-unjudged-fields",
      );
    });

    it.each([
      ["an apiVersion not known yet", sandbox(UNKNOWN_WIRE), "apiVersion is not known yet"],
      ["a kind not known yet", sandbox(undefined, UNKNOWN_WIRE), "kind is not known yet"],
      ["a secret kind", sandbox(undefined, secret("Sandbox")), "kind is unreadable (it is a Pulumi secret"],
      ["no kind", { ...sandbox(), kind: undefined }, "kind is absent"],
      [
        "an apiVersion with two slashes",
        sandbox("a/b/v1"),
        'apiVersion is "a/b/v1", which has more than one "/"',
      ],
    ])("fails closed on %s", (_, props, why) => {
      // As the engine runs the pack: the remediation that shows secrets runs first (docs/design.md).
      const m = mine(engineRun(GENERIC, props).outcome);
      expect(m).toHaveLength(1);
      expect(m[0]).toContain(
        `CustomResource "fixture" may create workloads the rules cannot judge: a CustomResource is the kind its apiVersion and kind name, but ${why}`,
      );
    });
  });

  it("fails closed on a refused or opaque type whatever its props, known or not", () => {
    expect(
      violated(validate("kubernetes:helm.sh/v3:Release", { chart: UNKNOWN_WIRE, values: UNKNOWN_WIRE })),
    ).toContain(RULE);
    expect(violated(validate("docker:index/image:Image", { imageName: UNKNOWN_WIRE }))).toContain(RULE);
    expect(violated(validate("command:local:Command", {}))).toContain(RULE);
  });

  describe("false-deny controls", () => {
    it.each([
      "kubernetes:core/v1:ConfigMap",
      "kubernetes:core/v1:Secret",
      "kubernetes:core/v1:Namespace",
      "kubernetes:rbac.authorization.k8s.io/v1:Role",
      "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
      "kubernetes:cert-manager.io/v1:Certificate",
      "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
      "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository",
      "kubernetes:constraints.gatekeeper.sh/v1beta1:K8sRequiredLabels",
      "docker:index/remoteImage:RemoteImage",
      "docker:index/registryImage:RegistryImage",
      "docker:index/tag:Tag",
      "docker:index/network:Network",
      "docker:index/volume:Volume",
      "random:index/randomPassword:RandomPassword",
    ])("passes %s, which runs nothing (its kind's verdict is inert)", (type) => {
      expect(violated(validate(type, OPAQUE))).not.toContain(RULE);
    });
  });

  describe("kinds with no verdict fail closed", () => {
    it.each([
      "kubernetes:example.com/v1:Kustomization",
      "kubernetes:example.com/v1:Application",
      "kubernetes:example.com/v1:HelmRelease",
      "kubernetes:widgets.example.com/v1:Deployment",
    ])("%s: a kind no verdict names (in its own group) fails closed", (type) => {
      expect(violated(validate(type, OPAQUE))).toContain(RULE);
    });

    it.each([
      ["an image alone (a reference, not a container)", { spec: { base: { image: "x:1" } } }],
      ["an image in status, which controllers write", { status: { image: "x:1", command: ["sh"] } }],
      ["no image at all", { spec: { replicas: 1 } }],
    ])("an unknown kind with %s fails closed by its kind", (_, props) => {
      expect(violated(validate("kubernetes:example.com/v1:Runner", props))).toContain(RULE);
    });

    it("an unknown kind with a pod template: its pod is judged by the other rules, and its kind fails closed", () => {
      const props = { spec: { template: { spec: safePodSpec() } } };
      expect(violated(validate("kubernetes:example.com/v1:Runner", props))).toEqual([RULE]);
    });

    it("kinds that change pods after they were judged fail closed; their validating forms pass", () => {
      for (const type of [
        "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
        "kubernetes:admissionregistration.k8s.io/v1:MutatingAdmissionPolicy",
        "kubernetes:admissionregistration.k8s.io/v1beta1:MutatingAdmissionPolicyBinding",
        "kubernetes:mutations.gatekeeper.sh/v1:Assign",
        "kubernetes:policies.kyverno.io/v1alpha1:MutatingPolicy",
      ])
        expect(violated(validate(type, OPAQUE)), type).toContain(RULE);
      for (const type of [
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
        "kubernetes:policies.kyverno.io/v1alpha1:ValidatingPolicy",
      ])
        expect(violated(validate(type, OPAQUE)), type).not.toContain(RULE);
    });

    it("a policy engine's policy fails closed by what its rules do", () => {
      const kyverno = (rule: object) => ({ spec: { rules: [{ name: "r", match: {}, ...rule }] } });
      const t = "kubernetes:kyverno.io/v1:ClusterPolicy";
      expect(violated(validate(t, kyverno({ validate: { message: "m" } })))).not.toContain(RULE);
      expect(violated(validate(t, kyverno({ mutate: { patchStrategicMerge: {} } })))).toContain(RULE);
      expect(violated(validate(t, kyverno({ generate: { kind: "Pod" } })))).toContain(RULE);
      const kw = "kubernetes:policies.kubewarden.io/v1:ClusterAdmissionPolicy";
      expect(violated(validate(kw, { spec: { mutating: false } }))).not.toContain(RULE);
      expect(violated(validate(kw, { spec: { mutating: true } }))).toContain(RULE);
      expect(violated(validate(kw, { spec: { mutating: "true" } }))).toContain(RULE);
      const js = "kubernetes:policy.jspolicy.com/v1beta1:JsPolicy";
      expect(violated(validate(js, { spec: { type: "Validating" } }))).not.toContain(RULE);
      expect(violated(validate(js, { spec: { type: "Mutating" } }))).toContain(RULE);
      expect(violated(validate(js, { spec: { type: "Controller" } }))).toContain(RULE);
    });

    it("a CRD with a conversion webhook, a host-path storage class, an ACME HTTP-01 issuer fail closed", () => {
      const crd = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
      expect(violated(validate(crd, { spec: { conversion: { strategy: "None" } } }))).not.toContain(RULE);
      expect(violated(validate(crd, { spec: { conversion: { strategy: "Webhook" } } }))).toContain(RULE);
      const sc = "kubernetes:storage.k8s.io/v1:StorageClass";
      expect(violated(validate(sc, { provisioner: "ebs.csi.aws.com" }))).not.toContain(RULE);
      expect(violated(validate(sc, { provisioner: "rancher.io/local-path" }))).toContain(RULE);
      const issuer = "kubernetes:cert-manager.io/v1:ClusterIssuer";
      const acme = (solver: object) => ({ spec: { acme: { server: "s", solvers: [solver] } } });
      expect(violated(validate(issuer, acme({ dns01: { webhook: {} } })))).not.toContain(RULE);
      expect(violated(validate(issuer, acme({ http01: { ingress: {} } })))).toContain(RULE);
    });
  });

  describe("scan", () => {
    it.each([
      [
        "a Flux HelmRelease",
        manifest("helm.toolkit.fluxcd.io/v2", "HelmRelease", { spec: { chart: { spec: { chart: "x" } } } }),
        "app",
      ],
      [
        "an Argo CD Application",
        manifest("argoproj.io/v1alpha1", "Application", { spec: { source: { repoURL: "https://x" } } }),
        "app",
      ],
      [
        "an unknown kind naming an image",
        manifest("example.com/v1", "Runner", { spec: { runner: { image: "x:1", args: ["-c"] } } }),
        "app",
      ],
    ])("fails on %s in every mode", async (_, text, name) => {
      const r = await scanned({ "m.yaml": text }, ["m.yaml"], name);
      expect(r.code).toBe(1);
      expect(r.rules).toContain(RULE);
      expect((await scanned({ "m.yaml": text }, ["--preset", "baseline", "m.yaml"], name)).code).toBe(1);
    });

    it("fails on kubectl's kustomization.yaml, a command in a stack export, and a plugin's config.json", async () => {
      const k =
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - https://example.com/x\n";
      expect(
        (await scanned({ "kustomization.yaml": k }, ["kustomization.yaml"], "Kustomization#1")).code,
      ).toBe(1);
      const state = JSON.stringify({
        version: 3,
        deployment: {
          resources: [
            {
              urn: "urn:pulumi:dev::sandbox::command:local:Command::setup",
              custom: true,
              type: "command:local:Command",
              inputs: { create: "make" },
            },
          ],
        },
      });
      const s = await scanned({ "state.json": state }, ["state.json"], "setup");
      expect(s.messages).toEqual([
        expect.stringMatching(/^sandbox-disallow-unjudged-workloads: Command "setup" .*outside every wall$/),
      ]);
      const plugin = JSON.stringify({
        Description: "d",
        Documentation: "",
        Entrypoint: ["/bin/p"],
        Interface: { Socket: "p.sock", Types: ["docker.volumedriver/1.0"] },
        Linux: { Capabilities: ["CAP_SYS_ADMIN"] },
        Network: { Type: "host" },
      });
      const p = await scanned({ "config.json": plugin }, ["config.json"], "plugin#1");
      expect(p.messages).toEqual([
        expect.stringMatching(/\(capabilities CAP_SYS_ADMIN, the host's network\)$/),
      ]);
    });

    it("accepts a kind named by --allow-unjudged as an exemption, and only that kind", async () => {
      const files = {
        "hr.yaml": manifest("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
        "app.yaml": manifest("argoproj.io/v1alpha1", "Application").replace('"app"', '"argo"'),
      };
      const r = await scanned(files, ["--allow-unjudged", "HelmRelease", "."], "app");
      expect(r.findings.map((f) => f.exemption?.reason)).toEqual([
        "accepted on the command line: --allow-unjudged HelmRelease",
      ]);
      expect(r.code).toBe(1); // the Application still fails
      expect((await scanned(files, ["--allow-unjudged", "HelmRelease", "hr.yaml"], "app")).code).toBe(0);
    });

    it("reports them as advisory with --no-fail-on-unjudged", async () => {
      const r = await scanned(
        { "hr.yaml": manifest("helm.toolkit.fluxcd.io/v2", "HelmRelease") },
        ["--no-fail-on-unjudged", "hr.yaml"],
        "app",
      );
      expect(r.code).toBe(0);
      expect(r.findings.map((f) => f.level)).toEqual(["advisory"]);
    });
  });
});
