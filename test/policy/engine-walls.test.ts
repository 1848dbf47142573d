// Every spelling the Docker daemon accepts for a weakened wall gets the verdict of the plain spelling: field names in
// any case or Unicode folding, repeated keys (the last wins), user and security-option forms, host path spellings;
// across the Engine API body (read by scan from its text), a docker.Container's props and a Kubernetes hostPath.
// Safe spellings give no violation.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judge } from "../../policy/rules/registry";
import { CREATE_REQUEST, type Shape } from "../../policy/sources/docker/schema";
import { adaptResources } from "../../policy/sources/subject";
import { parseInput } from "../../policy/sources/text/documents";
import { copy, DOCKER, first, safeContainer, safePodSpec } from "./fixtures";
import { DECLARED, validate, violated } from "./harness";

const SAFE_BODY = {
  Image: "sandbox-busybox@sha256:0a0ca1b8c1f8d2b8ad6a2e4b4b0a3f2b0f45c1c6c3e8a1d1b7a9e5d3c2b1a0f9",
  User: "1000:1000",
  Cmd: ["timeout", "-s", "KILL", "600", "sh", "/job/run.sh"],
  Env: ["LANG=C.UTF-8"],
  Labels: { "sandbox.project": "demo", "sandbox.role": "task" },
  HostConfig: {
    CapDrop: ["ALL"],
    SecurityOpt: ["no-new-privileges:true"],
    ReadonlyRootfs: true,
    Tmpfs: { "/tmp": "rw,noexec,nosuid,size=64m" },
    Memory: 536870912,
    MemorySwap: 536870912,
    NanoCpus: 1000000000,
    RestartPolicy: { Name: "no" },
    NetworkMode: "none",
    PidsLimit: 128,
    Mounts: [
      { Type: "bind", Source: "/var/lib/sandbox-projects/demo/jobs/1", Target: "/job", ReadOnly: false },
    ],
  },
};

/** Violated rule ids of a body sent as `text`, read as scan reads a file. */
function bodyRules(text: string): string[] {
  const parsed = parseInput("body.json", text);
  expect(parsed.errors).toEqual([]);
  const item = parsed.items[0];
  if (item === undefined) throw new Error("no item");
  const ids = adaptResources(item.type, item.props, item.name).flatMap((s) =>
    judge(s, undefined, DECLARED)
      .filter((r) => r.findings.some((f) => f.unchecked !== true))
      .map((r) => r.rule.id),
  );
  return [...new Set(ids)].sort();
}

/** A body as written: members in order so repeated keys reach the text. */
type Written = { o: [string, Written][] } | { a: Written[] } | { raw: string };

function text(w: Written): string {
  if ("raw" in w) return w.raw;
  if ("a" in w) return `[${w.a.map(text).join(",")}]`;
  return `{${w.o.map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(",")}}`;
}

/** Another spelling Go matches to the same field: case per letter, `s`/`k` as U+017F/U+212A. */
function respell(name: string, rnd: () => number): string {
  return [...name]
    .map((ch) => {
      const forms = [ch, ch.toLowerCase(), ch.toUpperCase()];
      if (ch.toLowerCase() === "s") forms.push("\u017f");
      if (ch.toLowerCase() === "k") forms.push("\u212a");
      return forms[Math.floor(rnd() * forms.length)] ?? ch;
    })
    .join("");
}

/**
 * `value` written with every struct field name respelled; where `decoy` has a different value for a field, a member
 * with the decoy's value goes first (under yet another spelling), so only the last-wins reading sees `value`.
 */
function written(value: unknown, s: Shape | undefined, rnd: () => number, decoy: unknown): Written {
  if (Array.isArray(value)) {
    const of =
      s?.k === "slice" || s?.k === "array"
        ? s.of
        : s?.k === "strslice"
          ? { k: "string" as const }
          : undefined;
    return { a: value.map((v) => written(v, of, rnd, undefined)) };
  }
  if (typeof value !== "object" || value === null) return { raw: JSON.stringify(value) };
  const inner = s?.k === "ptr" ? s.to : s;
  const members: [string, Written][] = [];
  for (const [k, v] of Object.entries(value)) {
    const fs = inner?.k === "struct" ? inner.fields[k] : inner?.k === "map" ? inner.of : undefined;
    const key = inner?.k === "struct" ? respell(k, rnd) : k;
    const d = typeof decoy === "object" && decoy !== null ? (decoy as Record<string, unknown>)[k] : undefined;
    if (
      inner?.k === "struct" &&
      d !== undefined &&
      JSON.stringify(d) !== JSON.stringify(v) &&
      typeof v !== "object"
    )
      members.push([respell(k, rnd), written(d, fs, rnd, undefined)]);
    members.push([key, written(v, fs, rnd, d)]);
  }
  return { o: members };
}

function withHost(
  extra: Record<string, unknown>,
  top: Record<string, unknown> = {},
): Record<string, unknown> {
  const b = copy(SAFE_BODY) as Record<string, unknown>;
  return { ...b, ...top, HostConfig: { ...(b.HostConfig as object), ...extra } };
}

/** Weakened walls, each written plainly, with the rule that must catch it. */
const DANGERS: [string, Record<string, unknown>, string][] = [
  ["Privileged", withHost({ Privileged: true }), "sandbox-disallow-privileged"],
  [
    "seccomp",
    withHost({ SecurityOpt: ["no-new-privileges", "seccomp=unconfined"] }),
    "sandbox-disallow-unconfined-seccomp",
  ],
  ["PidMode", withHost({ PidMode: "host" }), "sandbox-disallow-host-namespaces"],
  ["UTSMode", withHost({ UTSMode: "host" }), "sandbox-disallow-host-namespaces"],
  ["MaskedPaths", withHost({ MaskedPaths: [] }), "sandbox-disallow-unmasked-proc"],
  [
    "writable-cgroups",
    withHost({ SecurityOpt: ["no-new-privileges", "writable-cgroups=true"] }),
    "sandbox-disallow-unmasked-proc",
  ],
  ["DeviceCgroupRules", withHost({ DeviceCgroupRules: ["c 1:3 rwm"] }), "sandbox-disallow-devices"],
  [
    "Devices",
    withHost({ Devices: [{ PathOnHost: "/dev/kvm", PathInContainer: "/dev/kvm" }] }),
    "sandbox-disallow-devices",
  ],
  ["Binds socket", withHost({ Binds: ["/var/run/docker.sock:/s:ro"] }), "sandbox-disallow-runtime-socket"],
  ["VolumesFrom", withHost({ VolumesFrom: ["other:ro"] }), "sandbox-disallow-runtime-socket"],
  [
    "local volume bind",
    withHost({
      Mounts: [
        ...SAFE_BODY.HostConfig.Mounts,
        {
          Type: "volume",
          Source: "v",
          Target: "/s",
          ReadOnly: true,
          VolumeOptions: {
            DriverConfig: { Name: "local", Options: { type: "none", o: "bind", device: "/run" } },
          },
        },
      ],
    }),
    "sandbox-disallow-runtime-socket",
  ],
  [
    "EndpointsConfig host",
    withHost({}, { NetworkingConfig: { EndpointsConfig: { host: {} } } }),
    "sandbox-disallow-host-namespaces",
  ],
  ["User root", withHost({}, { User: "0" }), "sandbox-require-non-root"],
];

describe("Engine API bodies: the verdict does not depend on how the daemon's fields are spelled", () => {
  it("the safe body passes every rule", () => {
    expect(bodyRules(JSON.stringify(SAFE_BODY))).toEqual([]);
  });

  it.each(DANGERS)("%s: the plain spelling is caught", (_, body, rule) => {
    expect(bodyRules(JSON.stringify(body))).toContain(rule);
  });

  it.each(DANGERS)(
    "%s: every key spelling, with a safe value written first, gets the same rules",
    (_, body) => {
      const plain = bodyRules(JSON.stringify(body));
      fc.assert(
        fc.property(fc.infiniteStream(fc.double({ min: 0, max: 0.999, noNaN: true })), (s) => {
          const it = s[Symbol.iterator]();
          const rnd = () => it.next().value as number;
          expect(bodyRules(text(written(body, CREATE_REQUEST, rnd, SAFE_BODY)))).toEqual(plain);
        }),
        { numRuns: 40 },
      );
    },
  );

  it("a respelled safe body, even with dangerous values written first and overridden, stays clean", () => {
    const decoy = withHost(
      { Privileged: false, PidMode: "host", UTSMode: "host", NetworkMode: "host" },
      { User: "0" },
    );
    fc.assert(
      fc.property(fc.infiniteStream(fc.double({ min: 0, max: 0.999, noNaN: true })), (s) => {
        const it = s[Symbol.iterator]();
        const rnd = () => it.next().value as number;
        expect(bodyRules(text(written(SAFE_BODY, CREATE_REQUEST, rnd, decoy)))).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});

const ROOT_USERS = [
  "0",
  "+0",
  "-0",
  "00",
  "000",
  "0:0",
  "root",
  "root:root",
  ":0",
  ":1000",
  "0:1000",
  "+0:5",
  "0:0:x",
];
const NON_ROOT_USERS = ["1000:1000", "+1000:1000", "01000:1000", "1000:1000:x"];
const NON_ROOT = "sandbox-require-non-root";

describe("users the daemon resolves to uid 0 (moby/sys/user GetExecUser)", () => {
  it.each(ROOT_USERS)("%s is root in an Engine body and in a docker.Container", (user) => {
    expect(bodyRules(JSON.stringify(withHost({}, { User: user })))).toContain(NON_ROOT);
    expect(violated(validate(DOCKER, { ...safeContainer(), user }))).toContain(NON_ROOT);
  });
  it.each(NON_ROOT_USERS)("%s is not root", (user) => {
    expect(bodyRules(JSON.stringify(withHost({}, { User: user })))).toEqual([]);
    expect(violated(validate(DOCKER, { ...safeContainer(), user }))).toEqual([]);
  });
});

/** Security options by what the daemon makes of them (daemon.parseSecurityOpt), with the rule they trip. */
const OPTS: [string[], string[]][] = [
  [["no-new-privileges", "seccomp=unconfined"], ["sandbox-disallow-unconfined-seccomp"]],
  [["no-new-privileges", "seccomp:unconfined"], ["sandbox-disallow-unconfined-seccomp"]],
  [["no-new-privileges", "apparmor=unconfined"], ["sandbox-disallow-unconfined-lsm"]],
  [["no-new-privileges", "apparmor:unconfined"], ["sandbox-disallow-unconfined-lsm"]],
  [["no-new-privileges", "label=disable"], ["sandbox-disallow-unconfined-lsm"]],
  [["no-new-privileges", "label:disable"], ["sandbox-disallow-unconfined-lsm"]],
  [["no-new-privileges", "disable"], ["sandbox-disallow-unconfined-lsm"]],
  [["no-new-privileges", "writable-cgroups"], ["sandbox-disallow-unmasked-proc"]],
  [["no-new-privileges", "writable-cgroups=T"], ["sandbox-disallow-unmasked-proc"]],
  [["no-new-privileges", "no-new-privileges=false"], ["sandbox-disallow-privilege-escalation"]],
  [["no-new-privileges=0"], ["sandbox-disallow-privilege-escalation"]],
  [["no-new-privileges=f"], ["sandbox-disallow-privilege-escalation"]],
  [["no-new-privileges"], []],
  [["no-new-privileges=t"], []],
  [["no-new-privileges=True"], []],
  [["no-new-privileges:1"], []],
  [["no-new-privileges", "writable-cgroups=false"], []],
  [["no-new-privileges", "seccomp=builtin"], []],
];

describe("security options in every spelling the daemon parses", () => {
  it.each(OPTS)("%j", (opts, rules) => {
    expect(bodyRules(JSON.stringify(withHost({ SecurityOpt: opts })))).toEqual(rules);
    expect(violated(validate(DOCKER, { ...safeContainer(), securityOpts: opts }))).toEqual(rules);
  });
});

/** Host paths that expose a runtime's API, and spellings of each. */
const RUNTIME_PATHS = [
  "/var/run/docker.sock",
  "/run/user/1000/docker.sock",
  "/run/user/1000/podman/podman.sock",
  "/home/me/.docker/run/docker.sock",
  "/home/me/.colima/default/docker.sock",
  "/Users/me/.rd/docker.sock",
  "/home/me/.orbstack/run/docker.sock",
  "/var/run/balena-engine.sock",
  "/run/k0s/containerd.sock",
  "/run/k3s/containerd/containerd.sock",
  "/run/containerd/s/0123abcd",
  "/run/systemd/private",
  "/run/dbus/system_bus_socket",
  "/var/snap/lxd/common/lxd/unix.socket",
  "/var/lib/kubelet/pod-resources/kubelet.sock",
  "/var/lib/kubelet/device-plugins",
  "/run/cri-dockerd.sock",
  "/run/kata-containers",
  "/run/containers/storage",
];

function spellingOf(p: string): fc.Arbitrary<string> {
  return fc
    .tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean())
    .map(([twin, dots, slashes, trailing]) => {
      let s = twin && p.startsWith("/run/") ? `/var${p}` : twin && p.startsWith("/var/run/") ? p.slice(4) : p;
      if (dots) s = s.replace(/^\/([^/]+)/, "/$1/./x/..");
      if (slashes) s = s.replace(/\//g, "//");
      if (trailing) s = `${s}/`;
      return s;
    });
}

const SOCKET = "sandbox-disallow-runtime-socket";

describe("runtime endpoints in every path spelling, through every input that mounts a host path", () => {
  it.each(RUNTIME_PATHS)("%s", (p) => {
    fc.assert(
      fc.property(spellingOf(p), (s) => {
        expect(bodyRules(JSON.stringify(withHost({ Binds: [`${s}:/s:ro`] })))).toContain(SOCKET);
        const mount = { Type: "bind", Source: s, Target: "/s", ReadOnly: true };
        expect(
          bodyRules(JSON.stringify(withHost({ Mounts: [...SAFE_BODY.HostConfig.Mounts, mount] }))),
        ).toContain(SOCKET);
        const c = copy(safeContainer());
        (c.mounts as object[]).push({ type: "bind", source: s, target: "/s", readOnly: true });
        expect(violated(validate(DOCKER, c))).toContain(SOCKET);
        const spec = copy(safePodSpec());
        spec.volumes = [{ name: "h", hostPath: { path: s } }];
        first(spec).volumeMounts = [{ name: "h", mountPath: "/s", readOnly: true }];
        expect(violated(validate("kubernetes:core/v1:Pod", { metadata: { name: "p" }, spec }))).toContain(
          SOCKET,
        );
      }),
      { numRuns: 12 },
    );
  });

  it.each([
    "\\\\.\\pipe\\docker_engine:\\\\.\\pipe\\docker_engine",
    "//./pipe/docker_engine://./pipe/docker_engine",
    "\\\\.\\pipe\\containerd-containerd:\\\\.\\pipe\\containerd-containerd",
  ])("the Windows named pipe bind %s", (bind) => {
    expect(bodyRules(JSON.stringify(withHost({ Binds: [bind] })))).toContain(SOCKET);
  });

  it("a Windows drive bind of the engine's state is sensitive", () => {
    expect(bodyRules(JSON.stringify(withHost({ Binds: ["C:\\ProgramData\\docker:C:\\d"] })))).toContain(
      SOCKET,
    );
    expect(bodyRules(JSON.stringify(withHost({ Binds: ["c:\\:c:\\host"] })))).toContain(
      "sandbox-disallow-sensitive-host-mounts",
    );
  });

  it("a bind the daemon refuses on every platform fails closed", () => {
    expect(bodyRules(JSON.stringify(withHost({ Binds: ["/a:/b:ro:x"] })))).toContain(SOCKET);
  });

  it("safe binds and a job folder stay clean", () => {
    expect(
      bodyRules(JSON.stringify(withHost({ Binds: ["/srv/data:/data:ro,rprivate,z", "cache:/cache:ro"] }))),
    ).toEqual([]);
  });
});
