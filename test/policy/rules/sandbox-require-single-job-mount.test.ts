/**
 * sandbox-require-single-job-mount: a task writes to the host in one place. At most one writable host mount (one
 * folder: the same path, or one pod volume mounted by several containers, counts once), under a job root when the
 * config names them (strictly under: the root itself is not a job folder); no host mount of either kind propagates
 * back to the host (shared, rshared, Bidirectional). Volumes, tmpfs and emptyDirs are not host mounts.
 */
import { describe, expect, it } from "vitest";
import { loadStack } from "../../../cli/main";
import { launchSpec } from "../../../components/model";
import { taskContainer } from "../../../runtime/docker/taskContainer";
import { policyPreflight } from "../../../runtime/preflight";
import { ROOT, rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, type RunOptions, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-single-job-mount";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;
const JOB = "/var/lib/sandbox-projects/demo/jobs/1";
const ROOTS = { jobRoots: ["/var/lib/sandbox-projects"] };
/** Roots that hold every folder the counting tests write, so only the count speaks. */
const WIDE = { jobRoots: ["/var/lib/sandbox-projects", "/srv"] };
/** No job root declared. */
const NONE = { jobRoots: [] };

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object): RunOptions => (config === undefined ? {} : { config: { [RULE]: config } });
const jobBind = { type: "bind", source: JOB, target: "/job", readOnly: false };
/** The hardened docker.Container with its job bind and `more` mounts. */
const docker = (more: Obj[], config?: object, props: Obj = {}) =>
  validate(DOCKER, { ...safeContainer(), mounts: [jobBind, ...more], ...props }, opts(config));
const vol = (driverOptions: Obj) => ({
  type: "volume",
  source: "v",
  target: "/v",
  volumeOptions: { driverOptions },
});
const bind = (source: string, extra: Obj = {}) => ({
  type: "bind",
  source,
  target: `/mnt${source}`,
  ...extra,
});

/** A hardened pod whose `job` volume is the host job folder, with more hostPath volumes and container edits. */
function pod(kind: string, edit: (spec: Obj, c: Obj) => void = () => {}, config?: object): Outcome {
  const spec = safePodSpec();
  spec.volumes = [
    { name: "job", hostPath: { path: JOB, type: "Directory" } },
    ...(spec.volumes as Obj[]).slice(1),
  ];
  edit(spec, (spec.containers as Obj[])[0] as Obj);
  return validate(carrier(kind).type, carrier(kind).build(spec), opts(config));
}
const addHost = (spec: Obj, name: string, path: string) => {
  spec.volumes = [...(spec.volumes as Obj[]), { name, hostPath: { path } }];
};
const mount = (c: Obj, m: Obj) => {
  c.volumeMounts = [...(c.volumeMounts as Obj[]), m];
};

/** Scans the first file, with `config` as the pack config (`--config`) when given. */
async function scanned(files: Record<string, string>, name: string, config?: object) {
  const withConfig =
    config === undefined ? files : { ...files, "policy.json": JSON.stringify({ [RULE]: config }) };
  const dir = tempFiles(withConfig);
  const args = [
    Object.keys(files)[0] as string,
    ...(config === undefined ? [] : ["--config", "policy.json"]),
  ];
  const { report } = await scanJson(args, undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return { rules: rulesOf(report, name), messages: violationsOf(report, name) };
}
const compose = (...lines: string[]) =>
  [
    "services:",
    "  app:",
    ...["image: sandbox-busybox:1", 'user: "1000:1000"', "read_only: true", ...lines].map((l) => `    ${l}`),
    "",
  ].join("\n");
const body = (binds: string[], mounts: Obj[] = []) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: { ReadonlyRootfs: true, Binds: binds, Mounts: mounts },
  });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods, with an emptyDir or a hostPath job folder", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS) {
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
      expect(violated(pod(kind)), kind).not.toContain(RULE);
    }
  });

  it.each([
    ["a second writable bind", [bind("/srv/cache")], "/srv/cache"],
    ["a second bind with readOnly: false", [bind("/srv/cache", { readOnly: false })], "/srv/cache"],
    [
      "a local volume whose options bind a host folder",
      [vol({ type: "none", o: "bind", device: "/srv/c" })],
      "/srv/c",
    ],
    [
      "an overlay volume (upperdir and workdir are written)",
      [vol({ type: "overlay", device: "overlay", o: "lowerdir=/srv/l,upperdir=/srv/u,workdir=/srv/w" })],
      "/srv/u, /srv/w",
    ],
  ])("refuses docker.Container with %s", (_, more, listed) => {
    expect(mine(docker(more, WIDE))).toEqual([
      expect.stringMatching(
        new RegExp(`writable host mounts \\(${JOB}, ${listed}\\); only the job folder may be writable$`),
      ),
    ]);
  });

  it("counts volumes[].hostPath as a host mount", () => {
    const m = mine(docker([], WIDE, { volumes: [{ hostPath: "/srv/cache", containerPath: "/c" }] }));
    expect(m).toEqual([expect.stringMatching(/the workload has 2 writable host mounts/)]);
  });

  it.each(["shared", "rshared"])("refuses %s propagation, on a read-only bind too", (propagation) => {
    const m = mine(docker([bind("/srv/data", { readOnly: true, bindOptions: { propagation } })]));
    expect(m).toEqual([
      expect.stringMatching(
        new RegExp(
          `mounts /srv/data with ${propagation} propagation, which reaches back into the host \\[mounts\\[1\\]\\]$`,
        ),
      ),
    ]);
  });

  it.each(KINDS)("refuses a %s with a second writable hostPath, or one in a second container", (kind) => {
    const second = pod(
      kind,
      (spec, c) => {
        addHost(spec, "cache", "/srv/cache");
        mount(c, { name: "cache", mountPath: "/cache" });
      },
      WIDE,
    );
    expect(mine(second)).toEqual([
      expect.stringMatching(/2 writable host mounts \(.*jobs\/1, \/srv\/cache\)/),
    ]);
    const sidecar = pod(
      kind,
      (spec) => {
        addHost(spec, "out", "/srv/out");
        spec.containers = [
          ...(spec.containers as Obj[]),
          { ...safeK8sContainer("side"), volumeMounts: [{ name: "out", mountPath: "/out" }] },
        ];
      },
      WIDE,
    );
    expect(mine(sidecar)).toEqual([expect.stringMatching(/2 writable host mounts/)]);
  });

  it.each(KINDS)("refuses Bidirectional propagation in a %s", (kind) => {
    const o = pod(kind, (_, c) => {
      c.volumeMounts = [{ name: "job", mountPath: "/job", mountPropagation: "Bidirectional" }];
    });
    expect(mine(o)).toEqual([
      expect.stringMatching(/container "task" mounts .*jobs\/1 with bidirectional propagation/),
    ]);
  });

  it("refuses, with jobRoots, a writable mount outside them or the root itself", () => {
    const alone = (source: string) =>
      validate(DOCKER, { ...safeContainer(), mounts: [bind(source)] }, opts(ROOTS));
    expect(mine(alone("/srv/job"))).toEqual([
      `container "fixture" mounts /srv/job writable, outside the job roots [/var/lib/sandbox-projects] [mounts[0]]`,
    ]);
    expect(mine(alone("/var/lib/sandbox-projects/"))).toEqual([
      expect.stringMatching(/mounts \/var\/lib\/sandbox-projects writable, outside/),
    ]);
    const kube = pod(
      "Pod",
      (spec) => {
        (spec.volumes as Obj[])[0] = { name: "job", hostPath: { path: "/tmp/job" } };
      },
      ROOTS,
    );
    expect(mine(kube)).toEqual([expect.stringMatching(/mounts \/tmp\/job writable, outside the job roots/)]);
  });

  it("refuses, with no job root declared, every writable host mount, naming jobRoots; read-only ones and emptyDirs pass", () => {
    const said =
      /mounts host path (\S+) writable, and no job root is declared: .*set jobRoots of sandbox-require-single-job-mount/;
    expect(mine(docker([], NONE))).toEqual([expect.stringMatching(said)]);
    expect(mine(docker([], NONE))[0]).toContain(`mounts host path ${JOB} writable`);
    for (const kind of KINDS)
      expect(mine(pod(kind, () => {}, NONE)), kind).toEqual([expect.stringMatching(said)]);
    // `readOnly: false` and a second spelling of the root are still writable job folders of no declared root.
    expect(mine(docker([bind("//srv/./job/", { readOnly: false })], NONE))).toContainEqual(
      expect.stringMatching(/mounts host path \/srv\/job writable, and no job root is declared/),
    );
    const readOnly = pod(
      "Pod",
      (spec, c) => {
        (spec.volumes as Obj[])[0] = { name: "job", emptyDir: {} };
        addHost(spec, "ref", "/srv/ref");
        mount(c, { name: "ref", mountPath: "/ref", readOnly: true });
      },
      NONE,
    );
    expect(violated(readOnly)).not.toContain(RULE);
    expect(violated(validate(DOCKER, { ...safeContainer(), mounts: [] }, opts(NONE)))).not.toContain(RULE);
  });

  it("scan, with no config, refuses a writable bind of a Compose file or an Engine API body, and passes a read-only one", async () => {
    const said = /no job root is declared/;
    expect(
      (await scanned({ "compose.yaml": compose("volumes: ['/srv/a:/a']") }, "app")).messages,
    ).toContainEqual(expect.stringMatching(said));
    expect((await scanned({ "body.json": body(["/srv/a:/a:rw"]) }, "container#1")).messages).toContainEqual(
      expect.stringMatching(said),
    );
    expect(
      (await scanned({ "compose.yaml": compose("volumes: ['/srv/a:/a:ro']") }, "app")).rules,
    ).not.toContain(RULE);
  });

  it("scan of the toolkit's launch spec reads its job root from the spec; a spec that names none fails", async () => {
    const project = loadStack(ROOT, "dev");
    const spec = launchSpec(project, "default", `${project.spec.name}-net`);
    const name = `${spec.project}/${spec.template}`;
    const declared = await scanned({ "spec.json": JSON.stringify(spec) }, name);
    expect(declared.rules).not.toContain(RULE);
    const { jobFolder, ...rest } = spec;
    const none = { ...rest, jobFolder: { containerPath: jobFolder.containerPath } };
    const undeclared = await scanned({ "spec.json": JSON.stringify(none) }, name);
    expect(undeclared.messages).toContainEqual(
      expect.stringMatching(/\/task writable, and no job root is declared/),
    );
    // The launcher's preflight declares the template's job root the same way.
    expect(policyPreflight()(taskContainer(spec, "t1").body, spec)).toEqual([]);
  });

  it("passes, with jobRoots, a job folder under a root in any spelling, and a read-only mount outside them", () => {
    expect(violated(docker([], { jobRoots: ["//var/lib/sandbox-projects/"] }))).not.toContain(RULE);
    expect(violated(docker([bind("/srv/ref", { readOnly: true })], ROOTS))).not.toContain(RULE);
    expect(violated(pod("Job", () => {}, ROOTS))).not.toContain(RULE);
  });

  const PROPAGATES = "  - { type: bind, source: /srv/a, target: /a, bind: { propagation: rshared } }";
  it.each([
    [
      "compose: two short-syntax binds",
      compose("volumes: ['/srv/a:/a', '/srv/b:/b']"),
      /2 writable host mounts \(\/srv\/a, \/srv\/b\)/,
    ],
    ["compose: rshared propagation", compose("volumes:", PROPAGATES), /with rshared propagation/],
    ["an Engine API body: two Binds", body(["/srv/a:/a", "/srv/b:/b:rw"]), /2 writable host mounts/],
    ["an Engine API body: a shared Bind", body(["/srv/a:/a:ro,shared"]), /with shared propagation/],
    [
      "an Engine API body: a Bind and a Mounts bind",
      body(["/srv/a:/a"], [{ Type: "bind", Source: "/srv/b", Target: "/b" }]),
      /2 writable host mounts/,
    ],
  ])("scan refuses %s", async (_, text, re) => {
    const isCompose = text.startsWith("services:");
    const files = { [isCompose ? "compose.yaml" : "body.json"]: text };
    expect((await scanned(files, isCompose ? "app" : "container#1")).messages).toContainEqual(
      expect.stringMatching(re),
    );
  });

  it("scan passes one writable bind beside read-only ones", async () => {
    expect(
      (await scanned({ "compose.yaml": compose("volumes: ['/srv/a/1:/a', '/srv/b:/b:ro']") }, "app", WIDE))
        .rules,
    ).not.toContain(RULE);
    expect(
      (await scanned({ "body.json": body(["/srv/a/1:/a:rslave", "/srv/b:/b:ro"]) }, "container#1", WIDE))
        .rules,
    ).not.toContain(RULE);
  });

  it("passes one folder written through several mounts: two spellings of a path, one pod volume in two containers", () => {
    expect(violated(docker([bind("/var/lib/sandbox-projects/demo/jobs//1/")]))).not.toContain(RULE);
    const shared = pod("Pod", (spec) => {
      spec.containers = [
        ...(spec.containers as Obj[]),
        { ...safeK8sContainer("side"), volumeMounts: [{ name: "job", mountPath: "/job" }] },
      ];
      spec.initContainers = [
        { ...safeK8sContainer("init"), volumeMounts: [{ name: "job", mountPath: "/job", subPath: "in" }] },
      ];
    });
    expect(violated(shared)).not.toContain(RULE);
  });

  it.each(["rslave", "slave", "private", "rprivate"])("passes %s propagation", (propagation) => {
    expect(
      violated(docker([bind("/srv/ref", { readOnly: true, bindOptions: { propagation } })])),
    ).not.toContain(RULE);
  });

  it.each(["HostToContainer", "None"])("passes mountPropagation %s", (mountPropagation) => {
    const o = pod("Pod", (_, c) => {
      c.volumeMounts = [{ name: "job", mountPath: "/job", mountPropagation }];
    });
    expect(violated(o)).not.toContain(RULE);
  });

  it("passes what is not a host mount: tmpfs, named volumes, emptyDir, and read-only hostPaths", () => {
    expect(
      violated(
        docker([
          { type: "volume", source: "cache", target: "/cache" },
          { type: "tmpfs", target: "/scratch" },
        ]),
      ),
    ).not.toContain(RULE);
    const o = pod("Pod", (spec, c) => {
      addHost(spec, "ref", "/srv/ref");
      spec.volumes = [...(spec.volumes as Obj[]), { name: "scratch", emptyDir: {} }];
      mount(c, { name: "ref", mountPath: "/ref", readOnly: true });
      mount(c, { name: "scratch", mountPath: "/scratch" });
    });
    expect(violated(o)).not.toContain(RULE);
  });

  it.each([
    ["readOnly", bind("/srv/x", { readOnly: UNKNOWN_WIRE })],
    ["source", bind(UNKNOWN_WIRE)],
    ["propagation", bind("/srv/x", { readOnly: true, bindOptions: { propagation: UNKNOWN_WIRE } })],
  ])("notes, without refusing, a host mount whose %s is not known until the update", (_, m) => {
    const o = docker([m]);
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });
});
