/**
 * sandbox-disallow-volume-types: every pod volume, mounted or not (the kubelet sets each one up), is of a kind Pod
 * Security restricted allows (configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim,
 * projected, secret). Each key of a volume that is not null is a source the rule judges. hostPath is left to the
 * host-mount rules unless `allowHostPath` is false (the baseline and restricted presets). Docker has no pod volumes.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, type RunOptions, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-volume-types";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object): RunOptions => (config === undefined ? {} : { config: { [RULE]: config } });

/** A hardened pod spec with `extra` volumes added (not mounted: the node sets them up all the same). */
function withVolumes(...extra: unknown[]): Obj {
  const spec = safePodSpec();
  return { ...spec, volumes: [...(spec.volumes as unknown[]), ...extra] };
}
const kube = (kind: string, spec: Obj, o: RunOptions = {}) =>
  validate(carrier(kind).type, carrier(kind).build(spec), o);
const pod = (volume: Obj, config?: object) =>
  kube("Pod", withVolumes({ name: "v", ...volume }), opts(config));

async function scanned(spec: Obj) {
  const dir = tempFiles({
    "pod.yaml": JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec }),
  });
  const { report } = await scanJson(["pod.yaml"], undefined, dir);
  expect(report.errors).toEqual([]);
  return { rules: rulesOf(report, "task"), messages: violationsOf(report, "task") };
}

const NETWORK = /the node's kernel mounts it over the node's network/;
const REFUSED: readonly [string, Obj, RegExp][] = [
  ["nfs", { server: "10.0.0.2", path: "/export" }, NETWORK],
  ["iscsi", { targetPortal: "10.0.0.2:3260", iqn: "iqn.2001-04.com.example:storage", lun: 0 }, NETWORK],
  ["cephfs", { monitors: ["10.0.0.3:6789"] }, NETWORK],
  ["rbd", { monitors: ["10.0.0.3:6789"], image: "disk" }, NETWORK],
  ["glusterfs", { endpoints: "gluster", path: "vol" }, NETWORK],
  ["fc", { wwids: ["3600508b400105e210000900000490000"] }, NETWORK],
  ["flexVolume", { driver: "example.com/lvm" }, /the node runs the driver's program as root on the host/],
  ["gitRepo", { repository: "https://example.com/repo.git" }, /the kubelet runs git on the host to fill it/],
  ["awsElasticBlockStore", { volumeID: "vol-1" }, /Pod Security restricted does not allow it/],
  ["azureFile", { secretName: "s", shareName: "share" }, /Pod Security restricted does not allow it/],
];

describe(RULE, () => {
  it("passes the hardened pods, and has nothing to say about a docker.Container", () => {
    for (const kind of KINDS) expect(violated(kube(kind, safePodSpec())), kind).not.toContain(RULE);
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
  });

  it.each(REFUSED)("refuses a %s volume, naming the volume, its kind and why", (kind, source, re) => {
    const m = mine(pod({ [kind]: source }));
    expect(m).toHaveLength(1);
    expect(m[0]).toContain(`volume "v" is a ${kind} volume, outside the allowed kinds [configMap, csi,`);
    expect(m[0]).toMatch(re);
    expect(m[0]).toMatch(new RegExp(`\\[spec\\.volumes\\[2\\]\\.${kind}\\]$`));
  });

  it.each(KINDS)("refuses an nfs volume in a %s, at the carrier's pod path", (kind) => {
    const m = mine(kube(kind, withVolumes({ name: "share", nfs: { server: "nas", path: "/" } })));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(new RegExp(`\\[${carrier(kind).specPath.join("\\.")}\\.volumes\\[2\\]\\.nfs\\]$`));
  });

  it("judges every source key of a volume, so a second key hides nothing; a null key is unset", () => {
    expect(mine(pod({ emptyDir: {}, nfs: { server: "nas", path: "/" } }))).toEqual([
      expect.stringMatching(/is a nfs volume/),
    ]);
    expect(violated(pod({ emptyDir: {}, nfs: null }))).not.toContain(RULE);
  });

  it("refuses a volume of a kind it has never heard of", () => {
    expect(mine(pod({ exampleVolume: { x: 1 } }))).toEqual([
      expect.stringMatching(/is a exampleVolume volume/),
    ]);
  });

  it("fails closed on a volume it cannot read (a text where the volume belongs)", () => {
    expect(mine(kube("Pod", withVolumes("nfs")))).toEqual([
      expect.stringMatching(/the source of volume cannot be checked: .*fails closed/),
    ]);
  });

  it.each([
    ["configMap", { name: "cfg" }],
    ["csi", { driver: "csi.cert-manager.io", volumeAttributes: { "csi.cert-manager.io/issuer-name": "ca" } }],
    ["downwardAPI", { items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" } }] }],
    ["emptyDir", { sizeLimit: "1Gi" }],
    [
      "ephemeral",
      {
        volumeClaimTemplate: {
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
        },
      },
    ],
    ["image", { reference: "registry.example/data:1", pullPolicy: "IfNotPresent" }],
    ["persistentVolumeClaim", { claimName: "data" }],
    ["projected", { sources: [{ configMap: { name: "cfg" } }] }],
    ["secret", { secretName: "s" }],
  ])("passes a %s volume, a kind Pod Security restricted allows", (kind, source) => {
    expect(violated(pod({ [kind]: source }))).not.toContain(RULE);
  });

  it("leaves hostPath to the host-mount rules by default, and refuses it with allowHostPath: false or a Pod Security preset", () => {
    const host = { hostPath: { path: "/var/lib/sandbox-projects/demo/jobs/1", type: "Directory" } };
    expect(violated(pod(host))).not.toContain(RULE);
    expect(violated(pod(host, { allowHostPath: true }))).not.toContain(RULE);
    expect(mine(pod(host, { allowHostPath: false }))).toEqual([
      expect.stringMatching(
        /volume "v" is a hostPath volume, .*: it exposes a host folder \(Pod Security forbids every hostPath\)/,
      ),
    ]);
    for (const preset of ["baseline", "restricted"] as const) {
      const o = kube("Pod", withVolumes({ name: "v", ...host }), { preset });
      expect(violated(o), preset).toContain(RULE);
    }
  });

  it("takes the allowed kinds from the config, exactly as written", () => {
    const cfg = { allowed: ["emptyDir", "nfs"] };
    expect(violated(pod({ nfs: { server: "nas", path: "/" } }, cfg))).not.toContain(RULE);
    expect(mine(pod({ configMap: { name: "cfg" } }, cfg))).toEqual([
      expect.stringMatching(/is a configMap volume, outside the allowed kinds \[emptyDir, nfs\]/),
    ]);
    expect(violated(pod({ nfs: { server: "nas", path: "/" } }, { allowed: ["NFS"] }))).toContain(RULE);
  });

  it("notes, without refusing, a volume list or a volume not known until the update", () => {
    const unknownList = kube("Pod", { ...safePodSpec(), volumes: UNKNOWN_WIRE });
    const unknownEntry = kube("Pod", withVolumes(UNKNOWN_WIRE));
    for (const o of [unknownList, unknownEntry]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("scan refuses a manifest with an nfs or gitRepo volume and passes the restricted kinds", async () => {
    const nfs = await scanned(withVolumes({ name: "share", nfs: { server: "nas", path: "/export" } }));
    expect(nfs.messages).toContainEqual(
      expect.stringMatching(/^sandbox-disallow-volume-types: volume "share" is a nfs volume/),
    );
    expect(
      (await scanned(withVolumes({ name: "src", gitRepo: { repository: "https://x/y.git" } }))).rules,
    ).toContain(RULE);
    expect(
      (
        await scanned(
          withVolumes(
            { name: "cfg", configMap: { name: "c" } },
            { name: "p", persistentVolumeClaim: { claimName: "d" } },
          ),
        )
      ).rules,
    ).not.toContain(RULE);
  });
});
