/**
 * Class 2: format detection never hides an object. The API server reads a Kubernetes object by apiVersion and kind
 * whatever other top-level keys it carries (unknown fields are dropped, or refused under strict validation). The
 * Docker Engine API decodes create bodies with Go's encoding/json: keys match fields case-insensitively with Unicode
 * simple folding (`ſ` U+017F folds to `s`, `K` U+212A to `k`), and a repeated key overwrites the earlier one, the
 * last one wins, whatever its case. A document that matches no format must be reported, not skipped in silence.
 */
import { describe, expect, it } from "vitest";
import { engineBody, pod } from "./fixtures";
import { blocked, cases, type Expect, passes, scanFiles } from "./harness";

const privilegedPod = (top: string) =>
  pod("p", {
    top,
    securityContext: "allowPrivilegeEscalation: false\ncapabilities: {drop: [ALL]}\nprivileged: true",
  });
const plainPod = { "pod.yaml": privilegedPod("") };
/** Unknown top-level fields: dropped by the API server, or refused under strict field validation. */
const extraKeys: Expect = {
  verdict: "blocked",
  rule: "sandbox-disallow-privileged",
  object: "p",
  engineRefuses: true,
};

cases("class 2: a Kubernetes object with extra top-level keys is still that object", [
  ...[
    "steps:\n  - run: echo",
    "services:\n  web:\n    image: nginx",
    "deployment:\n  replicas: 1",
    "Image: busybox:1.36",
    "HostConfig:\n  Privileged: false",
    "checkpoint:\n  latest: {}",
    "config:\n  sandbox:backend: docker",
  ].map((top) => ({
    name: `Pod with an extra top-level ${top.split(":")[0]} key`,
    files: { "pod.yaml": privilegedPod(top) },
    plain: plainPod,
    want: extraKeys,
  })),
  {
    name: "Pod as JSON with an extra top-level services key",
    files: {
      "pod.json": JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        services: {},
        spec: {
          containers: [{ name: "c", image: "busybox", securityContext: { privileged: true } }],
        },
      }),
    },
    plain: plainPod,
    want: extraKeys,
  },
]);

const socketBind = ["/var/run/docker.sock:/var/run/docker.sock"];
const body = (o: Record<string, unknown>) => `${JSON.stringify(o, null, 2)}\n`;
const safeHost = JSON.parse(engineBody()).HostConfig as Record<string, unknown>;

cases("class 2: Engine API create bodies as encoding/json reads them", [
  {
    name: "lower-case hostconfig and privileged keys",
    files: {
      "create.json": body({
        image: "busybox",
        user: "1000:1000",
        hostconfig: { ...safeHost, privileged: true },
      }),
    },
    plain: { "create.json": engineBody({}, { Privileged: true }) },
    want: blocked("sandbox-disallow-privileged"),
  },
  {
    name: "upper-case IMAGE and HOSTCONFIG keys",
    files: {
      "create.json": body({
        IMAGE: "busybox",
        USER: "1000:1000",
        HOSTCONFIG: { ...safeHost, PRIVILEGED: true },
      }),
    },
    plain: { "create.json": engineBody({}, { Privileged: true }) },
    want: blocked("sandbox-disallow-privileged"),
  },
  {
    name: "Binds spelled with U+017F long s (Bind\u017f), folds to Binds",
    files: { "create.json": engineBody({}, { "Bind\u017f": socketBind }) },
    plain: { "create.json": engineBody({}, { Binds: socketBind }) },
    want: blocked("sandbox-disallow-runtime-socket"),
  },
  {
    name: "NetworkMode spelled with U+212A Kelvin sign (Networ\u212aMode): host",
    files: { "create.json": engineBody({}, { "Networ\u212aMode": "host", NetworkMode: undefined }) },
    plain: { "create.json": engineBody({}, { NetworkMode: "host" }) },
    want: blocked(),
  },
  {
    name: "\u017fecurityOpt with seccomp=unconfined",
    files: {
      "create.json": engineBody(
        {},
        { SecurityOpt: undefined, "\u017fecurityOpt": ["no-new-privileges:true", "seccomp=unconfined"] },
      ),
    },
    plain: {
      "create.json": engineBody({}, { SecurityOpt: ["no-new-privileges:true", "seccomp=unconfined"] }),
    },
    want: blocked("sandbox-disallow-unconfined-seccomp"),
  },
  {
    name: "duplicate Privileged key, false then true: the last one wins",
    files: {
      "create.json": engineBody({}, { Privileged: "__P__" }).replace(
        '"Privileged": "__P__"',
        '"Privileged": false, "Privileged": true',
      ),
    },
    plain: { "create.json": engineBody({}, { Privileged: true }) },
    want: blocked("sandbox-disallow-privileged"),
  },
  {
    name: "duplicate key in other case, Privileged: false then privileged: true: the last one wins",
    files: {
      "create.json": engineBody({}, { Privileged: "__P__" }).replace(
        '"Privileged": "__P__"',
        '"Privileged": false, "privileged": true',
      ),
    },
    plain: { "create.json": engineBody({}, { Privileged: true }) },
    want: blocked("sandbox-disallow-privileged"),
  },
  {
    name: "duplicate HostConfig object: the later one (privileged) is the one decoded",
    files: {
      "create.json": engineBody().replace(
        /\n}\n$/,
        ',\n  "hostConfig": {"Privileged": true, "CapDrop": ["ALL"]}\n}\n',
      ),
    },
    plain: { "create.json": engineBody({}, { Privileged: true }) },
    want: blocked("sandbox-disallow-privileged"),
  },
]);

cases("class 2: safe spellings of Engine API bodies are not denied", [
  {
    name: "duplicate key Privileged: true then privileged: false: the last one wins, passes",
    files: {
      "create.json": engineBody({}, { Privileged: "__P__" }).replace(
        '"Privileged": "__P__"',
        '"Privileged": true, "privileged": false',
      ),
    },
    want: passes,
  },
  {
    name: "every key in lower case, hardened body, passes",
    files: {
      "create.json": body({
        image: "busybox",
        user: "1000:1000",
        hostconfig: Object.fromEntries(Object.entries(safeHost).map(([k, v]) => [k.toLowerCase(), v])),
      }),
    },
    want: passes,
  },
]);

describe("class 2: a document matching no format is reported", () => {
  it("a YAML document with neither kind, services, steps nor Image is listed as skipped or an error", async () => {
    const { report } = await scanFiles({
      "odd.yaml": "spec:\n  containers:\n    - image: busybox\n      securityContext: {privileged: true}\n",
    });
    expect(report.skipped.length + report.errors.length, JSON.stringify(report.resources)).toBeGreaterThan(0);
  });
  it("a second document matching no format, after a safe Pod, is reported too", async () => {
    const { report } = await scanFiles({ "two.yaml": `${pod("p")}---\nfoo: bar\n` });
    expect(report.skipped.length + report.errors.length).toBeGreaterThan(0);
  });
});
