/**
 * sandbox-disallow-service-account-token: a task pod gets no Kubernetes API credential. The ServiceAccount admission
 * plugin adds the `kube-api-access-*` projected volume unless the pod says `automountServiceAccountToken: false`, and
 * a projected `serviceAccountToken` source a container mounts is the same token by hand. Docker has no such token.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-service-account-token";
type Spec = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
const API_VERSION: Record<string, string> = { Pod: "v1", Deployment: "apps/v1", Job: "batch/v1" };

function spec(edit: (s: Spec) => void = () => {}): Spec {
  const s = safePodSpec();
  edit(s);
  return s;
}
function run(kind: string, s: Spec): Outcome {
  const c = carrier(kind);
  return validate(c.type, c.build(s));
}
const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);

/** A Kubernetes manifest of `kind` around the pod spec, as a file `scan` reads. */
function manifest(kind: string, s: Spec): string {
  return JSON.stringify({
    ...carrier(kind).build(s),
    apiVersion: API_VERSION[kind],
    kind,
    metadata: { name: "task" },
  });
}
async function scanRules(kind: string, s: Spec): Promise<string[]> {
  const dir = tempFiles({ "task.yaml": manifest(kind, s) });
  const { report } = await scanJson(["task.yaml"], undefined, dir);
  expect(report.resources.map((r) => r.name)).toContain("task");
  return rulesOf(report, "task");
}

/** A projected volume with the given sources, mounted by the first container (or only declared). */
function projected(sources: object[], mounted = true): (s: Spec) => void {
  return (s) => {
    (s.volumes as object[]).push({ name: "kube-api", projected: { sources } });
    const c = (s.containers as Spec[])[0] as Spec;
    if (mounted) (c.volumeMounts as object[]).push({ name: "kube-api", mountPath: "/var/run/secrets/x" });
  };
}
const TOKEN = { serviceAccountToken: { path: "token", expirationSeconds: 3600 } };

describe(RULE, () => {
  it.each(KINDS)("passes the hardened %s", (kind) => {
    expect(violated(run(kind, spec()))).not.toContain(RULE);
  });

  it("never judges a Docker container, which gets no Kubernetes token", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
  });

  const failing: [string, (s: Spec) => void, RegExp][] = [
    [
      "automountServiceAccountToken absent (the admission plugin mounts the token)",
      (s) => {
        delete s.automountServiceAccountToken;
      },
      /mounts a service-account token \(automountServiceAccountToken is not false\)/,
    ],
    [
      "automountServiceAccountToken: true",
      (s) => {
        s.automountServiceAccountToken = true;
      },
      /automountServiceAccountToken is not false/,
    ],
    [
      "a projected serviceAccountToken source a container mounts",
      projected([TOKEN]),
      /container "task" mounts a projected service-account token \(volume "kube-api"\)/,
    ],
    [
      "a projected token beside other sources",
      projected([{ configMap: { name: "ca" } }, TOKEN]),
      /mounts a projected service-account token/,
    ],
    [
      "a projected token an init container mounts",
      (s) => {
        (s.volumes as object[]).push({ name: "kube-api", projected: { sources: [TOKEN] } });
        s.initContainers = [
          { ...safeK8sContainer("setup"), volumeMounts: [{ name: "kube-api", mountPath: "/t" }] },
        ];
      },
      /init container "setup" mounts a projected service-account token/,
    ],
  ];

  describe.each(KINDS)("on a %s", (kind) => {
    it.each(failing)("refuses %s", (_, edit, re) => {
      const m = mine(run(kind, spec(edit)));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
    });
  });

  it.each([
    ["Pod", "automountServiceAccountToken absent", failing[0]?.[1]],
    ["Job", "a mounted projected token", projected([TOKEN])],
    ["Deployment", "automountServiceAccountToken: true", failing[1]?.[1]],
  ] as const)("scan refuses a %s manifest with %s", async (kind, _, edit) => {
    expect(await scanRules(kind, spec(edit))).toContain(RULE);
  });

  it("scan passes the hardened Job manifest", async () => {
    expect(await scanRules("Job", spec())).not.toContain(RULE);
  });

  it.each([
    [
      "a projected volume of configMap and downwardAPI sources",
      projected([
        { configMap: { name: "ca" } },
        { downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" } }] } },
      ]),
    ],
    ["a projected token volume no container mounts", projected([TOKEN], false)],
    [
      "a named serviceAccount with the token turned off",
      (s: Spec) => {
        s.serviceAccountName = "task-runner";
      },
    ],
  ])("passes %s", (_, edit) => {
    for (const kind of KINDS) expect(violated(run(kind, spec(edit))), kind).not.toContain(RULE);
  });

  it("notes a preview unknown automountServiceAccountToken instead of refusing it", () => {
    const o = run(
      "Pod",
      spec((s) => {
        s.automountServiceAccountToken = UNKNOWN_WIRE;
      }),
    );
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });
});
