/**
 * The `baseline` and `restricted` presets as Pod Security's levels (k8s.io/pod-security-admission
 * policy/check_*.go): nothing a level refuses passes under its preset, with the pod's own securityContext judged by
 * itself and names compared exactly as the checks compare them; the mission and fail-closed rules stay mandatory
 * under every preset. Also the objects that deploy what the scan cannot read (kustomize, Flux, Argo CD, ...), and
 * Gloo Edge's entry points.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { validate, violated } from "../../policy/harness";
import { pod, SAFE_CONTAINER_SECURITY, SAFE_POD_SECURITY } from "../fixtures";
import { assertVerdict, blocked, cases, passes, scanFiles } from "../harness";

const RESTRICTED = ["--preset", "restricted"];
const BASELINE = ["--preset", "baseline"];
const hostPathPod = pod("p", {
  container: "volumeMounts:\n  - name: job\n    mountPath: /job\n    readOnly: true",
  spec: "volumes:\n  - name: job\n    hostPath: {path: /srv/jobs/one}",
});
const podSc = (extra: string) => pod("p", { podSecurity: `${SAFE_POD_SECURITY}\n${extra}` });
const uidOnly = "runAsUser: 1000\nrunAsGroup: 1000\nseccompProfile: {type: RuntimeDefault}";

cases("what Pod Security baseline refuses fails under --preset baseline", [
  {
    name: "a read-only hostPath outside the runtime's folders (hostPathVolumes forbids any)",
    files: { "pod.yaml": hostPathPod },
    args: BASELINE,
    want: blocked("sandbox-disallow-volume-types", "p"),
  },
  {
    name: "a pod-level windowsOptions.hostProcess: true (windowsHostProcess)",
    files: { "pod.yaml": podSc("windowsOptions: {hostProcess: true}") },
    want: blocked("sandbox-disallow-privileged", "p"),
  },
  {
    name: "a container windowsOptions.hostProcess: true",
    files: { "pod.yaml": pod("p", { containerSecurity: "windowsOptions: {hostProcess: true}" }) },
    want: blocked("sandbox-disallow-privileged", "p"),
  },
  {
    name: "a pod-level Unconfined seccomp that the container overrides",
    files: {
      "pod.yaml": pod("p", {
        podSecurity:
          "runAsNonRoot: true\nrunAsUser: 1000\nrunAsGroup: 1000\nseccompProfile: {type: Unconfined}",
        containerSecurity: "seccompProfile: {type: RuntimeDefault}",
      }),
    },
    args: BASELINE,
    want: blocked("sandbox-disallow-unconfined-seccomp", "p"),
  },
  {
    name: "a pod-level SELinux type spc_t that the container overrides",
    files: {
      "pod.yaml": pod("p", {
        podSecurity: `${SAFE_POD_SECURITY}\nseLinuxOptions: {type: spc_t}`,
        containerSecurity: "seLinuxOptions: {type: container_t}",
      }),
    },
    args: BASELINE,
    want: blocked("sandbox-disallow-unconfined-lsm", "p"),
  },
  {
    name: "an SELinux type with a space (compared exactly)",
    files: { "pod.yaml": pod("p", { containerSecurity: 'seLinuxOptions: {type: " container_t"}' }) },
    want: blocked("sandbox-disallow-unconfined-lsm", "p"),
  },
  {
    name: "an AppArmor annotation Unconfined for a container name the pod lacks",
    files: {
      "pod.yaml": pod("p", {
        top: "  annotations:\n    container.apparmor.security.beta.kubernetes.io/other: unconfined",
      }),
    },
    args: BASELINE,
    want: blocked("sandbox-disallow-unconfined-lsm", "p"),
  },
  {
    name: "adding cap_net_bind_service (Pod Security compares NET_BIND_SERVICE exactly)",
    files: {
      "pod.yaml": pod("p", { securityContext: `${SAFE_CONTAINER_SECURITY}\n  add: [cap_net_bind_service]` }),
    },
    args: BASELINE,
    plainArgs: [],
    want: blocked("sandbox-disallow-added-capabilities", "p"),
  },
  {
    name: "a secret in the environment (a mission rule) stays mandatory under baseline",
    files: {
      "pod.yaml": pod("p", {
        container: "env:\n  - name: DB\n    valueFrom: {secretKeyRef: {name: db, key: password}}",
      }),
    },
    args: BASELINE,
    want: blocked("sandbox-disallow-secret-env", "p"),
  },
]);

cases("what Pod Security restricted refuses fails under --preset restricted", [
  {
    name: "runAsNonRoot absent with uid 1000",
    files: { "pod.yaml": pod("p", { podSecurity: uidOnly }) },
    args: RESTRICTED,
    want: blocked("sandbox-require-non-root", "p"),
  },
  {
    name: "a container runAsNonRoot: false under a pod runAsNonRoot: true",
    files: { "pod.yaml": pod("p", { containerSecurity: "runAsNonRoot: false" }) },
    args: RESTRICTED,
    want: blocked("sandbox-require-non-root", "p"),
  },
  {
    name: "a pod-level runAsUser 0 that the container overrides",
    files: {
      "pod.yaml": pod("p", {
        podSecurity:
          "runAsNonRoot: true\nrunAsUser: 0\nrunAsGroup: 1000\nseccompProfile: {type: RuntimeDefault}",
        containerSecurity: "runAsUser: 1000",
      }),
    },
    args: RESTRICTED,
    want: blocked("sandbox-require-non-root", "p"),
  },
  {
    name: "drop: [all] (Pod Security requires the exact string ALL)",
    files: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [all]",
      }),
    },
    args: RESTRICTED,
    want: blocked("sandbox-require-drop-all", "p"),
  },
  {
    name: "the six-capability drop set instead of ALL",
    files: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [NET_RAW, MKNOD, SYS_CHROOT, SETFCAP, SETPCAP, NET_ADMIN]",
      }),
    },
    args: RESTRICTED,
    want: blocked("sandbox-require-drop-all", "p"),
  },
  {
    name: "an nfs volume",
    files: {
      "pod.yaml": pod("p", { spec: "volumes:\n  - name: data\n    nfs: {server: 10.0.0.5, path: /x}" }),
    },
    args: RESTRICTED,
    want: blocked("sandbox-disallow-volume-types", "p"),
  },
]);

cases("presets deny no more than before where the pod is what Pod Security allows", [
  {
    name: "the hardened pod under restricted",
    files: { "pod.yaml": pod("p") },
    args: RESTRICTED,
    want: passes,
  },
  { name: "the hardened pod under baseline", files: { "pod.yaml": pod("p") }, args: BASELINE, want: passes },
  {
    name: "without a preset a pod-level value every container overrides is not judged (the kubelet never applies it)",
    files: {
      "pod.yaml": pod("p", {
        podSecurity:
          "runAsNonRoot: true\nrunAsUser: 0\nrunAsGroup: 1000\nseccompProfile: {type: RuntimeDefault}",
        containerSecurity: "runAsUser: 1000",
      }),
    },
    want: passes,
  },
  {
    name: "without a preset a hostPath job folder is left to the host-mount rules",
    files: { "pod.yaml": hostPathPod },
    want: passes,
  },
]);

/** Objects whose controller deploys content from elsewhere, each as a user writes it. */
const GITOPS: readonly [string, string][] = [
  [
    "kustomize.config.k8s.io/v1beta1 Kustomization",
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [pod.yaml]\npatches:\n  - target: {kind: Pod, name: safe}\n    patch: |-\n      - op: add\n        path: /spec/containers/0/securityContext/privileged\n        value: true\n",
  ],
  [
    "Flux HelmRelease",
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo}\nspec:\n  chartRef: {kind: OCIRepository, name: podinfo}\n  values: {securityContext: {privileged: true}}\n",
  ],
  [
    "Flux Kustomization",
    "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\nspec: {path: ./apps, sourceRef: {kind: GitRepository, name: flux-system}}\n",
  ],
  [
    "Argo CD Application",
    "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: guestbook}\nspec:\n  source: {repoURL: https://github.com/argoproj/argocd-example-apps.git, path: guestbook}\n  syncPolicy: {automated: {}}\n",
  ],
  [
    "Argo CD ApplicationSet",
    "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: all}\nspec: {generators: [], template: {spec: {source: {repoURL: https://example.com/x.git}}}}\n",
  ],
  [
    "k3s HelmChart",
    "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: x}\nspec: {chart: nginx, repo: https://charts.example.com}\n",
  ],
  [
    "Fleet GitRepo",
    "apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\nmetadata: {name: x}\nspec: {repo: https://example.com/x.git}\n",
  ],
  [
    "kapp-controller App",
    "apiVersion: kappctrl.k14s.io/v1alpha1\nkind: App\nmetadata: {name: x}\nspec: {fetch: [{git: {url: https://example.com/x.git}}]}\n",
  ],
];

describe("objects that deploy what the scan cannot read", () => {
  const RULE = "sandbox-disallow-unjudged-workloads";
  for (const [name, text] of GITOPS) {
    it(`${name}: unjudged, blocking with --ci, listed without it, refused by the pack`, async () => {
      const files = { "pod.yaml": pod("safe"), "obj.yaml": text };
      assertVerdict(await scanFiles(files, ["--ci"]), blocked(RULE));
      // Without --fail-on-unjudged (CI=true in the environment turns it on, as --ci does).
      const r = await scanFiles(files, ["--no-fail-on-unjudged"]);
      expect(r.code).toBe(0);
      expect(r.report.findings.some((f) => f.ruleId === RULE)).toBe(true);
      expect(r.report.skipped).toEqual([]);
      const obj = parse(text) as { apiVersion: string; kind: string };
      const o = validate(`kubernetes:${obj.apiVersion}:${obj.kind}`, obj, { name: "x" });
      expect(violated(o)).toContain(RULE);
    });
  }

  it("a Flux GitRepository (it only fetches; its kind is inert) is not unjudged", async () => {
    const text =
      "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: x}\nspec: {url: https://example.com/x.git}\n";
    assertVerdict(await scanFiles({ "obj.yaml": text }, ["--ci"]), passes);
  });
});

cases("Gloo Edge entry points", [
  {
    name: "a gateway.solo.io VirtualService serving every domain",
    files: {
      "vs.yaml":
        "apiVersion: gateway.solo.io/v1\nkind: VirtualService\nmetadata: {name: web}\nspec:\n  virtualHost:\n    domains: ['*']\n    routes: [{matchers: [{prefix: /}], routeAction: {single: {upstream: {name: web, namespace: gloo-system}}}}]\n",
    },
    plain: {
      "ing.yaml":
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec: {defaultBackend: {service: {name: web, port: {number: 80}}}}\n",
    },
    want: blocked("sandbox-disallow-exposed-ports", "web"),
  },
  {
    name: "a gateway.solo.io Gateway (a listener on the gateway proxy)",
    files: {
      "gw.yaml":
        "apiVersion: gateway.solo.io/v1\nkind: Gateway\nmetadata: {name: web}\nspec: {bindAddress: '::', bindPort: 8080, httpGateway: {}}\n",
    },
    want: blocked("sandbox-disallow-exposed-ports", "web"),
  },
]);
