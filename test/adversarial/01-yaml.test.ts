/**
 * Class 1: YAML as the engine parses it. The API server and kubectl turn YAML into JSON with sigs.k8s.io/yaml, which
 * decodes with its go-yaml v2 fork: YAML 1.1 booleans (y, Yes, ON, off...), integers with `_`, 0x/0o/0b and leading-0
 * octal, floats that are whole numbers, `!!binary` (decoded to a string), merge keys applied in document order (a
 * `<<` after an explicit key overrides it), duplicate keys (last wins when field validation is not strict). Compose
 * reads YAML with yaml v3 (explicit keys beat `<<`, duplicate keys are an error), then compose-go casts boolean
 * strings (true/yes/y/on in any case) for typed fields. Checked against sigs.k8s.io/yaml v1.6.0 YAMLToJSON and
 * compose-go v2.16.2's loader.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { compose, pod, SAFE_CONTAINER_SECURITY } from "./fixtures";
import { assertVerdict, blocked, cases, passes, scanFiles } from "./harness";

/** go-yaml v2's resolve table: exactly these spellings are booleans. */
const YAML11_TRUE = ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"];
const YAML11_FALSE = ["n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"];
/** Every one of these is the integer 0 after sigs.k8s.io/yaml (checked): the API server reads uid 0. */
const ZERO = [
  "0",
  "00",
  "0x0",
  "0X0",
  "0o0",
  "0b0",
  "+0",
  "-0",
  "0.0",
  "0e0",
  "+0x0",
  "0x_0",
  "0_0",
  "0__0",
  ".0",
  "+00",
];
/** ... and these are 1000. */
const THOUSAND = ["1_000", "0x3e8", "0o1750", "01750", "+1000", "1000.0", "1e3", "0b1111101000", "1_0_0_0"];

const RUNS = { numRuns: 25 };

function privileged(value: string): string {
  return pod("p", { securityContext: `${SAFE_CONTAINER_SECURITY}\nprivileged: ${value}` });
}

describe("class 1: YAML 1.1 scalars as sigs.k8s.io/yaml reads them (generated)", () => {
  it("privileged: <any YAML 1.1 true> is blocked like privileged: true", async () => {
    assertVerdict(
      await scanFiles({ "pod.yaml": privileged("true") }),
      blocked("sandbox-disallow-privileged", "p"),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...YAML11_TRUE), async (v) => {
        assertVerdict(
          await scanFiles({ "pod.yaml": privileged(v) }),
          blocked("sandbox-disallow-privileged", "p"),
        );
      }),
      RUNS,
    );
  });

  it("privileged: <any YAML 1.1 false> passes (no false denial)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...YAML11_FALSE), async (v) => {
        assertVerdict(await scanFiles({ "pod.yaml": privileged(v) }), passes);
      }),
      RUNS,
    );
  });

  it("allowPrivilegeEscalation: <any YAML 1.1 false> passes; <any true> is blocked", async () => {
    const sc = (v: string) =>
      `allowPrivilegeEscalation: ${v}\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [ALL]`;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...YAML11_FALSE), fc.constantFrom(...YAML11_TRUE), async (f, t) => {
        assertVerdict(await scanFiles({ "pod.yaml": pod("p", { securityContext: sc(f) }) }), passes);
        assertVerdict(
          await scanFiles({ "pod.yaml": pod("p", { securityContext: sc(t) }) }),
          blocked("sandbox-disallow-privilege-escalation", "p"),
        );
      }),
      RUNS,
    );
  });

  it("hostPID: <any YAML 1.1 true> is blocked like hostPID: true", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("true", ...YAML11_TRUE), async (v) => {
        assertVerdict(
          await scanFiles({ "pod.yaml": pod("p", { spec: `hostPID: ${v}` }) }),
          blocked("sandbox-disallow-host-namespaces", "p"),
        );
      }),
      RUNS,
    );
  });

  it("runAsUser: <any spelling of 0> (hex, octal, binary, _, sign, float) is root", async () => {
    const sec = (uid: string) =>
      `runAsUser: ${uid}\nrunAsGroup: 1000\nseccompProfile:\n  type: RuntimeDefault`;
    assertVerdict(
      await scanFiles({ "pod.yaml": pod("p", { podSecurity: sec("0") }) }),
      blocked("sandbox-require-non-root", "p"),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ZERO), async (v) => {
        assertVerdict(
          await scanFiles({ "pod.yaml": pod("p", { podSecurity: sec(v) }) }),
          blocked("sandbox-require-non-root", "p"),
        );
      }),
      { numRuns: 40 },
    );
  });

  it("runAsUser: <any spelling of 1000> with runAsNonRoot passes", async () => {
    const sec = (uid: string) =>
      `runAsNonRoot: true\nrunAsUser: ${uid}\nrunAsGroup: 1000\nseccompProfile:\n  type: RuntimeDefault`;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...THOUSAND), async (v) => {
        assertVerdict(await scanFiles({ "pod.yaml": pod("p", { podSecurity: sec(v) }) }), passes);
      }),
      RUNS,
    );
  });
});

const SOCKET_B64 = Buffer.from("/var/run/docker.sock").toString("base64");
const socketVolume = (path: string) => ({
  container: "volumeMounts:\n  - name: s\n    mountPath: /s",
  spec: `volumes:\n  - name: s\n    hostPath:\n      path: ${path}`,
});

cases("class 1: tags, anchors, merge keys and duplicates (Kubernetes, go-yaml v2)", [
  {
    name: "hostPath path as !!binary base64 of /var/run/docker.sock",
    files: { "pod.yaml": pod("p", socketVolume(`!!binary ${SOCKET_B64}`)) },
    plain: { "pod.yaml": pod("p", socketVolume("/var/run/docker.sock")) },
    want: blocked("sandbox-disallow-runtime-socket", "p"),
  },
  {
    name: 'privileged: !!bool "true" (explicit tag on a quoted scalar)',
    files: { "pod.yaml": privileged('!!bool "true"') },
    plain: { "pod.yaml": privileged("true") },
    want: blocked("sandbox-disallow-privileged", "p"),
  },
  {
    name: "hostPath path through an alias of an env value anchor",
    files: {
      "pod.yaml": pod("p", {
        container:
          "env:\n  - name: SOCK\n    value: &sock /var/run/docker.sock\nvolumeMounts:\n  - name: s\n    mountPath: /s",
        spec: "volumes:\n  - name: s\n    hostPath:\n      path: *sock",
      }),
    },
    plain: { "pod.yaml": pod("p", socketVolume("/var/run/docker.sock")) },
    want: blocked("sandbox-disallow-runtime-socket", "p"),
  },
  {
    name: "merge key after an explicit privileged: false overrides it (v2 applies << in document order)",
    files: {
      "pod.yaml": pod("p", {
        securityContext: `${SAFE_CONTAINER_SECURITY}\nprivileged: false\n<<: {privileged: true}`,
      }),
    },
    plain: { "pod.yaml": privileged("true") },
    want: blocked("sandbox-disallow-privileged", "p"),
  },
  {
    name: "merge list [{privileged: true}, {privileged: false}]: the first map wins",
    files: {
      "pod.yaml": pod("p", {
        securityContext: `${SAFE_CONTAINER_SECURITY}\n<<: [{privileged: true}, {privileged: false}]`,
      }),
    },
    plain: { "pod.yaml": privileged("true") },
    want: blocked("sandbox-disallow-privileged", "p"),
  },
  {
    name: "duplicate key privileged: false then privileged: true (last wins; engine accepts? strict validation refuses)",
    files: {
      "pod.yaml": pod("p", {
        securityContext: `${SAFE_CONTAINER_SECURITY}\nprivileged: false\nprivileged: true`,
      }),
    },
    plain: { "pod.yaml": privileged("true") },
    want: { verdict: "blocked", rule: "sandbox-disallow-privileged", object: "p", engineRefuses: true },
  },
]);

cases("class 1: YAML as Compose reads it (yaml v3, compose-go casts)", [
  ...["yes", "on", "y", "Y", "ON", '"TRUE"', '"True"', "'yes'"].map((v) => ({
    name: `compose privileged: ${v} (compose-go toBoolean)`,
    files: { "compose.yaml": compose("app", `privileged: ${v}`) },
    plain: { "compose.yaml": compose("app", "privileged: true") },
    want: blocked("sandbox-disallow-privileged", "app"),
  })),
  {
    name: "compose merge key from an x- extension brings privileged: true",
    files: { "compose.yaml": `x-danger: &d\n  privileged: true\n${compose("app", "<<: *d")}` },
    plain: { "compose.yaml": compose("app", "privileged: true") },
    want: blocked("sandbox-disallow-privileged", "app"),
  },
  {
    name: "compose privileged: 1 is refused by compose-go (invalid boolean): never a pass",
    files: { "compose.yaml": compose("app", "privileged: 1") },
    want: { verdict: "blocked", engineRefuses: true },
  },
  {
    name: "compose duplicate key privileged: false / privileged: true is a yaml v3 error: never a pass",
    files: { "compose.yaml": compose("app", "privileged: false\nprivileged: true") },
    want: { verdict: "blocked", engineRefuses: true },
  },
  {
    name: "compose user: root spelled +0 (Atoi reads it as uid 0)",
    files: { "compose.yaml": compose("app", "").replace('user: "1000:1000"', 'user: "+0"') },
    plain: { "compose.yaml": compose("app", "").replace('user: "1000:1000"', 'user: "0"') },
    want: blocked("sandbox-require-non-root", "app"),
  },
]);

cases("class 1: safe spellings are not denied", [
  {
    name: "k8s explicit privileged: false after <<: {privileged: true} wins (document order), passes",
    files: {
      "pod.yaml": pod("p", {
        securityContext: `<<: {privileged: true}\n${SAFE_CONTAINER_SECURITY}\nprivileged: false`,
      }),
    },
    want: passes,
  },
  {
    name: "k8s merge list [{privileged: false}, {privileged: true}]: the first map wins, passes",
    files: {
      "pod.yaml": pod("p", {
        securityContext: `${SAFE_CONTAINER_SECURITY}\n<<: [{privileged: false}, {privileged: true}]`,
      }),
    },
    want: passes,
  },
  {
    name: "compose explicit privileged: false before <<: *danger wins (yaml v3), passes",
    files: {
      "compose.yaml": `x-danger: &d\n  privileged: true\n${compose("app", "privileged: false\n<<: *d")}`,
    },
    want: passes,
  },
  {
    name: "compose privileged: off / no / n (cast to false) passes",
    files: {
      "compose.yaml": `services:\n${["off", "no", "n", '"FALSE"']
        .map((v, i) => compose(`s${i}`, `privileged: ${v}`).replace("services:\n", ""))
        .join("")}`,
    },
    want: passes,
  },
]);
