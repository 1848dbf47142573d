/**
 * Kubernetes pod fields as the kubelet, containerd and pod-security-admission apply them.
 * - Probe and lifecycle `host` (PSA baseline `hostProbesAndHostLifecycle`, policy/check_hostProbesAndhostLifecycle.go):
 *   the kubelet connects from the node's network to any non-empty host, in every probe and handler.
 * - Inline volume sources outside PSA restricted's list (policy/check_restrictedVolumes.go): nfs, iscsi, rbd, ...
 *   are mounted by the node, flexVolume runs a host program, gitRepo runs git on the host.
 * - Devices through Dynamic Resource Allocation (`spec.resourceClaims`), and extended resources a device plugin serves.
 * - Capability drops as containerd's CRI applies them (pkg/cri/opts/spec_opts.go WithCapabilities): `ALL` in any
 *   case drops all; every other entry becomes `"CAP_" + upper(entry)` with no trim, so `CAP_ALL`, `cap_net_admin`
 *   and ` ALL` drop nothing.
 * The pack gives the same verdict as `scan` on every generated case.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { validate, violated } from "../../policy/harness";
import { pod } from "../fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "../harness";

const POD = "kubernetes:core/v1:Pod";

/** Scan verdict and pack verdict of one Pod text, asserted to agree on `rule`. */
async function both(text: string, rule: string, bad: boolean): Promise<void> {
  assertVerdict(await scanFiles({ "pod.yaml": text }), bad ? blocked(rule, "p") : passes);
  const o = validate(POD, parse(text) as object, { name: "p" });
  expect(violated(o).includes(rule), JSON.stringify(o.violations)).toBe(bad);
  if (!bad)
    expect(
      o.violations.filter((v) => !v.policy.endsWith("-drop-all")),
      "pack",
    ).toEqual([]);
}

const HANDLERS = [
  "livenessProbe",
  "readinessProbe",
  "startupProbe",
  "lifecycle.postStart",
  "lifecycle.preStop",
];

/** A container block with `handler` (dotted) holding `{kind: {port: 80, host?}}`. */
function handlerBlock(handler: string, kind: string, host: string | undefined): string {
  const body = `${kind}: {port: 80${host === undefined ? "" : `, host: ${JSON.stringify(host)}`}}`;
  const [a, b] = handler.split(".");
  return b === undefined ? `${a}:\n  ${body}` : `${a}:\n  ${b}:\n    ${body}`;
}

describe("probe and lifecycle hosts", () => {
  const RULE = "sandbox-disallow-host-probes";
  it("any probe or handler, httpGet or tcpSocket, with any non-empty host is blocked in scan and pack", async () => {
    await both(
      pod("p", { container: handlerBlock("livenessProbe", "httpGet", "169.254.169.254") }),
      RULE,
      true,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...HANDLERS),
        fc.constantFrom("httpGet", "tcpSocket"),
        fc.constantFrom("169.254.169.254", "10.0.0.1", "kubernetes.default.svc", " ", "localhost", "::1"),
        async (h, kind, host) => {
          await both(pod("p", { container: handlerBlock(h, kind, host) }), RULE, true);
        },
      ),
      { numRuns: 20 },
    );
  });

  it("the same handlers without a host, or with host empty, pass (the kubelet uses the pod's IP)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...HANDLERS),
        fc.constantFrom("httpGet", "tcpSocket"),
        fc.constantFrom(undefined, ""),
        async (h, kind, host) => {
          await both(pod("p", { container: handlerBlock(h, kind, host) }), RULE, false);
        },
      ),
      { numRuns: 10 },
    );
  });

  it("an init container's probe host is blocked too", async () => {
    const text = pod("p", {
      spec: `initContainers:\n  - name: init\n    image: busybox:1.36\n    readinessProbe: {tcpSocket: {host: 10.0.0.1, port: 6443}}`,
    });
    assertVerdict(await scanFiles({ "pod.yaml": text }), blocked(RULE, "p"));
  });
});

/** Every inline source PSA restricted refuses, with a minimal body. */
const REFUSED: readonly [string, string][] = [
  ["nfs", "{server: 198.51.100.7, path: /exports}"],
  ["iscsi", "{targetPortal: 10.0.0.9:3260, iqn: iqn.2001-04.com.example:storage, lun: 0}"],
  ["rbd", "{monitors: [10.0.0.8:6789], image: img}"],
  ["cephfs", "{monitors: [10.0.0.8:6789]}"],
  ["glusterfs", "{endpoints: gl, path: vol}"],
  ["flexVolume", "{driver: example/host, options: {path: /var/run}}"],
  ["gitRepo", "{repository: https://example.com/x.git}"],
  ["fc", "{wwids: [abc]}"],
  ["azureFile", "{secretName: s, shareName: x}"],
  ["cinder", "{volumeID: v}"],
  ["awsElasticBlockStore", "{volumeID: v}"],
  ["gcePersistentDisk", "{pdName: d}"],
  ["portworxVolume", "{volumeID: v}"],
  ["quobyte", "{registry: r:7861, volume: v}"],
];

/** Sources PSA restricted allows whose volume no other rule refuses when mounted read-only. */
const ALLOWED: readonly [string, string][] = [
  ["emptyDir", "{}"],
  ["configMap", "{name: cm}"],
  ["downwardAPI", "{items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}"],
  ["csi", "{driver: csi.cert-manager.io, volumeAttributes: {csi.cert-manager.io/issuer-name: ca}}"],
  [
    "ephemeral",
    "{volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}",
  ],
  ["persistentVolumeClaim", "{claimName: data}"],
  ["image", "{reference: busybox:1.36}"],
  ["projected", "{sources: [{configMap: {name: cm}}]}"],
];

const volumePod = (kind: string, body: string, mounted: boolean) =>
  pod("p", {
    ...(mounted
      ? { container: "volumeMounts:\n  - name: data\n    mountPath: /data\n    readOnly: true" }
      : {}),
    spec: `volumes:\n  - name: data\n    ${kind}: ${body}`,
  });

describe("volume kinds Pod Security restricted refuses", () => {
  const RULE = "sandbox-disallow-volume-types";
  it("every refused source, mounted or not, is blocked in scan and pack", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...REFUSED), fc.boolean(), async ([kind, body], mounted) => {
        await both(volumePod(kind, body, mounted), RULE, true);
      }),
      { numRuns: 25 },
    );
  });

  it("every allowed source passes (no new false denial)", async () => {
    for (const [kind, body] of ALLOWED) await both(volumePod(kind, body, true), RULE, false);
  });

  it("a refused source next to an allowed one in the same volume is still blocked", async () => {
    const text = pod("p", {
      spec: "volumes:\n  - name: data\n    emptyDir: {}\n    nfs: {server: 10.0.0.5, path: /x}",
    });
    assertVerdict(await scanFiles({ "pod.yaml": text }), blocked(RULE, "p"));
  });

  it("a source written as null is unset, as the API decodes it", async () => {
    const text = pod("p", { spec: "volumes:\n  - name: data\n    emptyDir: {}\n    nfs: null" });
    assertVerdict(await scanFiles({ "pod.yaml": text }), passes);
  });
});

/** The safe pod with `lines` added to its container's `resources` (beside the cpu and memory limits). */
function withResources(lines: string, spec?: string): string {
  const text = pod("p", spec === undefined ? {} : { spec });
  const at = text.indexOf("      resources:\n");
  expect(at).toBeGreaterThan(0);
  const indented = lines
    .split("\n")
    .map((l) => `        ${l}`)
    .join("\n");
  return `${text.slice(0, at)}      resources:\n${indented}\n${text.slice(at + "      resources:\n".length)}`;
}

describe("devices the kubelet's drivers inject", () => {
  const RULE = "sandbox-disallow-devices";
  const claim = (ref: string) =>
    withResources("claims:\n  - name: gpu", `resourceClaims:\n  - name: gpu\n    ${ref}`);
  it("a DRA claim, from a template or a named claim, is blocked like the extended GPU resource", async () => {
    const plain = withResources("requests:\n  nvidia.com/gpu: 1");
    assertVerdict(await scanFiles({ "pod.yaml": plain }), blocked(RULE, "p"));
    await both(claim("resourceClaimTemplateName: gpu"), RULE, true);
    await both(claim("resourceClaimName: shared-gpu"), RULE, true);
  });

  it("an extended resource of any name (a device plugin serves it) is blocked", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("example.com/dongle", "smarter-devices/fuse", "squat.ai/serial", "devic.es/tun"),
        async (name) => {
          await both(withResources(`requests:\n  ${name}: 1`), RULE, true);
        },
      ),
      { numRuns: 8 },
    );
  });

  it("cpu, memory, ephemeral-storage and hugepages are not devices", async () => {
    const text = withResources("requests:\n  ephemeral-storage: 1Gi\n  hugepages-2Mi: 4Mi\n  cpu: 100m");
    await both(text, RULE, false);
  });
});

const dropPod = (drop: readonly string[]) =>
  pod("p", {
    securityContext: `allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: ${JSON.stringify(drop)}`,
  });

/** Any-case spelling of `s`, as the generator varies it. */
const anyCase = (s: string) =>
  fc
    .array(fc.boolean(), { minLength: s.length, maxLength: s.length })
    .map((up) => [...s].map((ch, i) => (up[i] ? ch.toUpperCase() : ch.toLowerCase())).join(""));

describe("capability drops as containerd applies them", () => {
  const RULE = "sandbox-require-drop-net-admin";
  it("ALL or NET_ADMIN with a CAP_ prefix or surrounding space drops nothing: blocked like no drop at all", async () => {
    await both(dropPod([]), RULE, true);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("ALL", "NET_ADMIN"),
        fc.constantFrom("cap_", "CAP_", "Cap_", " ", ""),
        fc.constantFrom("", " ", "\t"),
        async (name, before, after) => {
          fc.pre(before !== "" || after !== "");
          await both(dropPod([`${before}${name}${after}`]), RULE, true);
        },
      ),
      { numRuns: 20 },
    );
  });

  it("ALL or NET_ADMIN in any case, bare, is honoured: passes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("ALL", "NET_ADMIN").chain(anyCase), async (entry) => {
        await both(dropPod([entry]), RULE, false);
      }),
      { numRuns: 12 },
    );
  });

  it("the message names the entry and why it drops nothing", async () => {
    const r = await scanFiles({ "pod.yaml": dropPod(["CAP_ALL"]) });
    const m = r.report.findings.find((f) => f.ruleId === RULE)?.message ?? "";
    expect(m).toContain('"CAP_ALL"');
    expect(m).toContain("drops nothing");
  });
});
