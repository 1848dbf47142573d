/**
 * sandbox-disallow-volume-types, CSI inline volumes judged by their driver: a network file system or object store
 * (refused like `nfs`), a host-path driver (like `hostPath`), a driver no table knows (fails closed), each unless
 * `allowedCsiDrivers` names it; cert-manager's driver and the Secrets Store driver pass.
 */
import { describe, expect, it } from "vitest";
import { csiDriverClass } from "../../../policy/sources/kubernetes/csi-drivers";
import { carrier, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-volume-types";
const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);

function pod(csi: unknown, config?: object): Outcome {
  const spec = safePodSpec();
  const volumes = [...(spec.volumes as unknown[]), { name: "v", csi }];
  return validate(carrier("Pod").type, carrier("Pod").build({ ...spec, volumes }), {
    ...(config === undefined ? {} : { config: { [RULE]: config } }),
  });
}

describe("CSI inline volumes by driver", () => {
  it.each([
    ["nfs.csi.k8s.io", "network"],
    ["smb.csi.k8s.io", "network"],
    ["efs.csi.aws.com", "network"],
    ["file.csi.azure.com", "network"],
    ["blob.csi.azure.com", "network"],
    ["rook-ceph.cephfs.csi.ceph.com", "network"],
    ["rbd.csi.ceph.com", "network"],
    ["s3.csi.aws.com", "network"],
    ["gcsfuse.csi.storage.gke.io", "network"],
    ["NFS.CSI.K8S.IO", "network"],
    ["hostpath.csi.k8s.io", "host"],
    ["local.csi.openebs.io", "host"],
    ["topolvm.io", "host"],
    ["csi.cert-manager.io", "safe"],
    ["secrets-store.csi.k8s.io", "safe"],
    ["ebs.csi.aws.com", "unknown"],
    ["example.com/mystery", "unknown"],
  ])("%s is %s", (driver, kind) => {
    expect(csiDriverClass(driver)).toBe(kind);
  });

  it("refuses a network file-system driver like nfs, naming the field and the opt-out", () => {
    expect(mine(pod({ driver: "nfs.csi.k8s.io", volumeAttributes: { server: "nas", share: "/" } }))).toEqual([
      expect.stringMatching(
        /volume "v" is a csi volume of driver "nfs.csi.k8s.io": it mounts a network file system .*name the driver in allowedCsiDrivers/,
      ),
    ]);
    expect(
      pod({ driver: "nfs.csi.k8s.io" }).violations.find((v) => v.policy === RULE)?.message,
    ).toBeDefined();
  });

  it("refuses a host-path driver and an unknown one; passes the safe ones", () => {
    expect(mine(pod({ driver: "hostpath.csi.k8s.io" }))).toEqual([
      expect.stringMatching(/folder or disk of the node/),
    ]);
    expect(mine(pod({ driver: "ebs.csi.aws.com" }))).toEqual([
      expect.stringMatching(/does not know what this driver mounts/),
    ]);
    expect(violated(pod({ driver: "csi.cert-manager.io" }))).not.toContain(RULE);
    expect(violated(pod({ driver: "secrets-store.csi.k8s.io", readOnly: true }))).not.toContain(RULE);
  });

  it("a driver that cannot be read fails closed; a preview unknown is a note", () => {
    expect(mine(pod({ driver: ["nfs.csi.k8s.io"] }))).toEqual([expect.stringMatching(/cannot be checked/)]);
    expect(mine(pod({}))).toEqual([expect.stringMatching(/driver "": the policy does not know/)]);
    expect(noted(pod({ driver: UNKNOWN_WIRE }))).toContain(RULE);
  });

  it("allowedCsiDrivers names exceptions, exactly", () => {
    const cfg = { allowedCsiDrivers: ["ebs.csi.aws.com", "nfs.csi.k8s.io"] };
    expect(violated(pod({ driver: "ebs.csi.aws.com" }, cfg))).not.toContain(RULE);
    expect(violated(pod({ driver: "nfs.csi.k8s.io" }, cfg))).not.toContain(RULE);
    expect(violated(pod({ driver: "EBS.csi.aws.com" }, cfg))).toContain(RULE);
  });

  it("refuses csi altogether when it is not an allowed kind", () => {
    expect(mine(pod({ driver: "csi.cert-manager.io" }, { allowed: ["emptyDir"] }))).toEqual([
      expect.stringMatching(/volume "v" is a csi volume, outside the allowed kinds/),
    ]);
  });
});
