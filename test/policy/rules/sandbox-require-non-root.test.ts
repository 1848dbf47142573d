/**
 * sandbox-require-non-root: no uid 0, no root group. Docker resolves `User` as moby/sys/user GetExecUser does: an
 * empty user part is uid 0, Atoi reads `+0`, `-0`, `00` as 0, `root` is 0 in every image, and with no group part the
 * gid is the image's passwd entry's (0 when it has none). Kubernetes takes the container's runAsUser/runAsGroup/
 * runAsNonRoot over the pod's; fsGroup and supplementalGroups are groups every container gets.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-non-root";
type Obj = Record<string, unknown>;
/** Sets one field (an edit of a fixture). */
const put = (o: Obj, key: string, value: unknown): void => {
  o[key] = value;
};
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object) => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (props: Obj, config?: object) =>
  validate(DOCKER, { ...safeContainer(), ...props }, opts(config));

/** Edits of a hardened pod: the pod's securityContext and the first container's. */
type Edit = (pod: Obj, sc: Obj) => void;
function podProps(kind: string, edit: Edit): Obj {
  const spec = safePodSpec();
  edit(spec.securityContext as Obj, ((spec.containers as Obj[])[0] as Obj).securityContext as Obj);
  return carrier(kind).build(spec);
}
const kube = (kind: string, edit: Edit, config?: object) =>
  validate(carrier(kind).type, podProps(kind, edit), opts(config));
/** Removes a key from both levels. */
const strip =
  (...keys: string[]): Edit =>
  (pod, sc) => {
    for (const k of keys) {
      delete pod[k];
      delete sc[k];
    }
  };

/** Edits: a field of the container's securityContext, of the pod's; several at once. */
const ctr =
  (key: string, value: unknown): Edit =>
  (_, sc) =>
    put(sc, key, value);
const pod =
  (key: string, value: unknown): Edit =>
  (p) =>
    put(p, key, value);
const all =
  (...edits: Edit[]): Edit =>
  (p, sc) => {
    for (const e of edits) e(p, sc);
  };

async function scanned(file: string, text: string, name: string): Promise<string[]> {
  const dir = tempFiles({ [file]: text });
  const { report } = await scanJson([file], undefined, dir);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return rulesOf(report, name);
}
const BASE = [
  "image: x",
  "read_only: true",
  "cap_drop: [ALL]",
  "network_mode: none",
  "mem_limit: 1g",
  "cpus: 1",
];
const compose = (...lines: string[]) =>
  `services:\n  app:\n${[...BASE, 'security_opt: ["no-new-privileges"]', ...lines].map((l) => `    ${l}`).join("\n")}\n`;
const HC = {
  CapDrop: ["ALL"],
  SecurityOpt: ["no-new-privileges"],
  ReadonlyRootfs: true,
  NetworkMode: "none",
};
const LIMITS = { Memory: 1 << 30, NanoCpus: 1e9, PidsLimit: 64 };
const body = (top: Obj, hc: Obj = {}) =>
  JSON.stringify({ Image: "x", ...top, HostConfig: { ...HC, ...LIMITS, ...hc } });

describe(RULE, () => {
  it("passes the hardened docker.Container (1000:1000) and the hardened pods", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of KINDS) expect(violated(kube(kind, () => {})), kind).not.toContain(RULE);
  });

  it.each([
    [
      "no user (the image's)",
      undefined,
      /sets no user, so the image's default user \(often root\) runs the task/,
    ],
    ["an empty user", "", /sets no user/],
    ["root", "root", /runs as root \(uid 0\)/],
    ["0", "0", /runs as root \(uid 0\)/],
    ["0:1000", "0:1000", /runs as root/],
    ["+0:1000 (Atoi reads +0)", "+0:1000", /runs as root/],
    ["-0:1000", "-0:1000", /runs as root/],
    ["00:1000", "00:1000", /runs as root/],
    [":1000 (an empty user part is uid 0)", ":1000", /runs as root/],
    ["root:1000", "root:1000", /runs as root/],
    ["1000:0", "1000:0", /runs with the root group \(gid 0\)/],
    ["1000:root", "1000:root", /root group/],
    ["1000 (no group: the image's gid, 0 without an entry)", "1000", /names no group.*fails closed/],
    ["1000: (an empty group part)", "1000:", /names no group/],
    ["a name with no group", "app", /names no group/],
  ])("refuses docker.Container user %s", (_, user, re) => {
    const m = mine(docker({ user }));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([["root"], ["0"], ["docker"]])("refuses docker.Container groupAdds %s", (g) => {
    expect(mine(docker({ groupAdds: ["video", g] }))).toEqual([expect.stringMatching(/joins the group/)]);
  });

  const kubeFailing: [string, Edit, RegExp][] = [
    ["runAsUser 0 on the container", ctr("runAsUser", 0), /container "task" runs as root \(uid 0\)/],
    [
      "the pod's runAsUser 0, inherited",
      all(strip("runAsUser"), pod("runAsUser", 0)),
      /runs as root \(uid 0\)/,
    ],
    [
      "neither runAsNonRoot nor a uid",
      strip("runAsUser", "runAsNonRoot"),
      /neither runAsNonRoot: true nor a non-zero runAsUser \[/,
    ],
    [
      "runAsNonRoot false, no uid",
      all(strip("runAsUser"), ctr("runAsNonRoot", false)),
      /\(runAsNonRoot is false\)/,
    ],
    ["runAsGroup 0", ctr("runAsGroup", 0), /runs with the root group \(gid 0\)/],
    [
      "the pod's runAsGroup 0, inherited",
      all(strip("runAsGroup"), pod("runAsGroup", 0)),
      /root group \(gid 0\)/,
    ],
    ["fsGroup 0", pod("fsGroup", 0), /joins the group 0/],
    ["supplementalGroups [0]", pod("supplementalGroups", [2000, 0]), /joins the group 0/],
  ];

  describe.each(KINDS)("on a %s", (kind) => {
    it.each(kubeFailing)("refuses %s", (_, edit, re) => {
      const m = mine(kube(kind, edit));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
    });
  });

  it.each([
    ["10001:10001", { user: "10001:10001" }],
    ["a named user with a named group (as the image resolves them)", { user: "app:app" }],
    ["a numeric user with a named group", { user: "1000:staff" }],
    ["groupAdds that are not root's", { groupAdds: ["1001", "video", "dockerd"] }],
  ])("passes docker.Container %s", (_, props) => {
    expect(violated(docker(props))).not.toContain(RULE);
  });

  it.each([
    ["runAsNonRoot: true with no uid (the kubelet checks the image's)", strip("runAsUser")],
    ["a uid with no runAsNonRoot", strip("runAsNonRoot")],
    ["the pod's runAsUser 0 that the container overrides", pod("runAsUser", 0)],
    ["supplementalGroups that are not root's", pod("supplementalGroups", [2000, 3000])],
  ])("passes %s", (_, edit) => {
    for (const kind of KINDS) expect(violated(kube(kind, edit)), kind).not.toContain(RULE);
  });

  describe("config", () => {
    it("allowRootGroup accepts gid 0 and root groups, never uid 0", () => {
      const cfg = { allowRootGroup: true };
      expect(violated(docker({ user: "1000:0" }, cfg))).not.toContain(RULE);
      expect(violated(docker({ user: "1000" }, cfg))).not.toContain(RULE);
      expect(violated(docker({ groupAdds: ["root"] }, cfg))).not.toContain(RULE);
      expect(violated(kube("Pod", pod("fsGroup", 0), cfg))).not.toContain(RULE);
      expect(violated(docker({ user: "0:1000" }, cfg))).toContain(RULE);
      expect(violated(kube("Job", ctr("runAsUser", 0), cfg))).toContain(RULE);
    });

    it("requireNumericUser refuses a user given by name", () => {
      expect(mine(docker({ user: "app:app" }, { requireNumericUser: true }))).toEqual([
        expect.stringMatching(/names its user "app" instead of a numeric uid/),
      ]);
      expect(violated(docker({ user: "1000:1000" }, { requireNumericUser: true }))).not.toContain(RULE);
    });

    it("requireRunAsNonRoot wants runAsNonRoot: true whatever the uid, and no false at the pod", () => {
      const cfg = { requireRunAsNonRoot: true };
      expect(mine(kube("Pod", strip("runAsNonRoot"), cfg))).toEqual([
        expect.stringMatching(
          /no runAsNonRoot: true \(its own or the pod's\); Pod Security restricted requires/,
        ),
      ]);
      const podFalse = all(pod("runAsNonRoot", false), ctr("runAsNonRoot", true));
      expect(violated(kube("Pod", podFalse))).not.toContain(RULE);
      expect(mine(kube("Pod", podFalse, cfg))).toEqual([
        expect.stringMatching(/the pod's securityContext sets runAsNonRoot: false/),
      ]);
      expect(violated(kube("Deployment", () => {}, cfg))).not.toContain(RULE);
      // Docker has no runAsNonRoot: the setting does not apply there.
      expect(violated(docker({}, cfg))).not.toContain(RULE);
    });

    it("judgePodLevel refuses a pod-level runAsUser 0 that every container overrides", () => {
      expect(mine(kube("Job", pod("runAsUser", 0), { judgePodLevel: true }))).toEqual([
        expect.stringMatching(/the pod's securityContext sets runAsUser: 0 \(root\)/),
      ]);
    });
  });

  it.each([
    ["docker.Container user", () => docker({ user: UNKNOWN_WIRE })],
    ["a Kubernetes runAsUser", () => kube("Pod", ctr("runAsUser", UNKNOWN_WIRE))],
    ["a Kubernetes runAsGroup", () => kube("Job", ctr("runAsGroup", UNKNOWN_WIRE))],
    ["docker.Container groupAdds", () => docker({ groupAdds: UNKNOWN_WIRE })],
  ])("notes %s not known until the update", (_, run) => {
    const o = run();
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });

  describe("scan", () => {
    it.each([
      ["no user", []],
      ['user "0"', ['user: "0"']],
      ["a user with no group (an unquoted number)", ["user: 1000"]],
      ["group_add: [docker]", ['user: "1000:1000"', "group_add: [docker]"]],
    ])("refuses a Compose service with %s", async (_, lines) => {
      expect(await scanned("compose.yaml", compose(...lines), "app")).toContain(RULE);
    });

    it.each([
      ["User 0:0", { User: "0:0" }, {}],
      ["no User", {}, {}],
      ["GroupAdd root", { User: "1000:1000" }, { GroupAdd: ["root"] }],
    ])("refuses an Engine API body with %s", async (_, top, hc) => {
      expect(await scanned("body.json", body(top, hc), "container#1")).toContain(RULE);
    });

    it("passes a Compose service and a body that run as 1000:1000", async () => {
      expect(await scanned("compose.yaml", compose('user: "1000:1000"'), "app")).not.toContain(RULE);
      expect(await scanned("body.json", body({ User: "1000:1000" }), "container#1")).not.toContain(RULE);
    });

    it("refuses a Deployment manifest whose pod runs as root, and passes the hardened one", async () => {
      const meta = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "task" } };
      const dep = (edit: Edit) => JSON.stringify({ ...podProps("Deployment", edit), ...meta });
      expect(await scanned("dep.yaml", dep(ctr("runAsUser", 0)), "task")).toContain(RULE);
      expect(
        await scanned(
          "dep.yaml",
          dep(() => {}),
          "task",
        ),
      ).not.toContain(RULE);
    });
  });
});

describe(`${RULE}: identity as the node resolves it`, () => {
  /** A hardened pod of `kind` with `spec` merged into its pod spec and `edit` applied to the securityContexts. */
  const pod = (kind: string, spec: Obj, edit: Edit = () => {}) => {
    const s = { ...safePodSpec(), ...spec };
    edit(s.securityContext as Obj, ((s.containers as Obj[])[0] as Obj).securityContext as Obj);
    return validate(carrier(kind).type, carrier(kind).build(s));
  };
  const user =
    (name: string): Edit =>
    (p) =>
      put(p, "windowsOptions", { runAsUserName: name });
  const PINS: [string, Obj][] = [
    ["os.name", { os: { name: "windows" } }],
    ["nodeSelector", { nodeSelector: { "kubernetes.io/os": "windows" } }],
    ["the beta label", { nodeSelector: { "beta.kubernetes.io/os": "windows" } }],
    [
      "a required affinity term",
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] },
                { matchExpressions: [{ key: "kubernetes.io/os", operator: "NotIn", values: ["linux"] }] },
              ],
            },
          },
        },
      },
    ],
  ];

  it.each(PINS)(
    "a pod pinned to Windows by %s runs as its runAsUserName: none, administrators and unknown names fail",
    (_, pin) => {
      for (const kind of KINDS) {
        expect(mine(pod(kind, pin)), kind).toEqual([
          expect.stringMatching(/runs on Windows nodes \(.*\) and sets no windowsOptions\.runAsUserName/),
        ]);
        for (const name of [
          "ContainerAdministrator",
          "containeradministrator",
          "NT AUTHORITY\\SYSTEM",
          "Administrator",
        ])
          expect(mine(pod(kind, pin, user(name))), name).toEqual([
            expect.stringMatching(/an administrator of the Windows container/),
          ]);
        expect(mine(pod(kind, pin, user("builder")))).toEqual([
          expect.stringMatching(/whose rights the policy cannot see; use ContainerUser/),
        ]);
        expect(mine(pod(kind, pin, user("ContainerUser")))).toEqual([]);
      }
    },
  );

  it("a container's runAsUserName wins over the pod's; a Linux pod's runAsUserName is ignored", () => {
    const win = { os: { name: "windows" } };
    const both: Edit = (p, sc) => {
      put(p, "windowsOptions", { runAsUserName: "ContainerUser" });
      put(sc, "windowsOptions", { runAsUserName: "ContainerAdministrator" });
    };
    expect(mine(pod("Pod", win, both))).toEqual([expect.stringMatching(/runs as ContainerAdministrator/)]);
    expect(
      mine(pod("Pod", { nodeSelector: { "kubernetes.io/os": "linux" } }, user("ContainerAdministrator"))),
    ).toEqual([]);
    expect(mine(pod("Pod", { nodeSelector: { "kubernetes.io/os": "Windows" } }))).toEqual([]);
  });

  it("runAsUser without runAsGroup fails closed in every container list; runAsNonRoot alone on the image's group too", () => {
    const noGroup: Edit = (p, sc) => {
      delete p.runAsGroup;
      delete sc.runAsGroup;
    };
    const side = { name: "side", image: "busybox", securityContext: { runAsUser: 1000 } };
    for (const list of ["initContainers", "ephemeralContainers"])
      expect(mine(pod("Pod", { [list]: [side] }, noGroup)), list).toContainEqual(
        expect.stringMatching(
          /the group of (init|ephemeral) container "side" cannot be checked: runAsUser 1000 comes with no runAsGroup/,
        ),
      );
    const imageUser: Edit = (p, sc) => {
      for (const k of ["runAsUser", "runAsGroup"]) {
        delete p[k];
        delete sc[k];
      }
    };
    expect(mine(pod("Pod", {}, imageUser))).toEqual([
      expect.stringMatching(
        /runAsNonRoot: true with no runAsUser and no runAsGroup .* runs the image's USER with the image's group/,
      ),
    ]);
    const groupOnly: Edit = (p, sc) => {
      delete p.runAsUser;
      delete sc.runAsUser;
    };
    expect(mine(pod("Pod", {}, groupOnly))).toEqual([]);
  });
});
