/**
 * CSI drivers of inline volumes (`spec.volumes[].csi.driver`), of PersistentVolumes (`spec.csi.driver`) and the
 * provisioners of StorageClasses (`provisioner`, kinds-builtin.ts), by what the node does for them: one table, so
 * the three cannot drift. Pod Security
 * restricted allows every `csi` volume; what it mounts is the driver's choice, so the driver is judged: a network
 * file system is mounted by the node over its network like an `nfs` volume, a host-path driver hands out a node
 * folder like a `hostPath`. Names from each driver's own repository (kubernetes-csi csi-driver-nfs,
 * csi-driver-smb, csi-driver-host-path; aws-efs-csi-driver, aws-fsx-csi-driver, mountpoint-s3-csi-driver;
 * Azure azurefile/blob/lustre; GKE filestore, gcsfuse, parallelstore; Alibaba Cloud NAS and OSS, Oracle FSS and
 * Lustre, IBM VPC file, Tencent CFS and COS; ceph-csi (Rook registers
 * `<namespace>.cephfs.csi.ceph.com`); JuiceFS, SeaweedFS, csi-s3, democratic-csi, OpenEBS, TopoLVM, KubeVirt).
 */

/** Drivers that mount a network file system or object store on the node. */
const NETWORK_DRIVERS: readonly RegExp[] = [
  /^nfs\.csi\.k8s\.io$/,
  /^smb\.csi\.k8s\.io$/,
  /^efs\.csi\.aws\.com$/,
  /^fsx(\.openzfs)?\.csi\.aws\.com$/,
  /^s3\.csi\.aws\.com$/,
  /^(file|blob|azurelustre)\.csi\.azure\.com$/,
  /^(filestore|gcsfuse|parallelstore|lustre)\.csi\.storage\.gke\.io$/,
  /(^|\.)(cephfs|rbd|nfs|nvmeof)\.csi\.ceph\.com$/,
  /^ru\.yandex\.s3\.csi$/,
  /^ch\.ctrox\.csi\.s3-driver$/,
  /^csi\.juicefs\.com$/,
  /^seaweedfs-csi-driver$/,
  /^org\.democratic-csi\./,
  /^csi\.weka\.io$/,
  /^beegfs\.csi\.netapp\.com$/,
  /^csi\.trident\.netapp\.io$/,
  /^cvmfs\.csi\.cern\.ch$/,
  /^driver\.longhorn\.io$/,
  // Cloud file and object stores whose names carry no file system's word: Alibaba Cloud NAS (NFS) and OSS (ossfs,
  // FUSE), Oracle Cloud File Storage (NFS) and Lustre, IBM Cloud VPC file shares (NFS), Tencent Cloud CFS (NFS),
  // CFS Turbo and COS (cosfs, FUSE); each mounts the share or bucket its volume attributes name on the node.
  /^(nas|oss)plugin\.csi\.alibabacloud\.com$/,
  /^(fss|lustre)\.csi\.oraclecloud\.com$/,
  /^vpc\.file\.csi\.ibm\.io$/,
  /^com\.tencent\.cloud\.csi\.(cfs|cfsturbo|cosfs)$/,
  // In-tree provisioners of network volumes (a StorageClass may still name them; csi-translation-lib maps
  // kubernetes.io/azure-file to file.csi.azure.com and kubernetes.io/rbd to rbd.csi.ceph.com).
  /^kubernetes\.io\/(azure-file|glusterfs|cephfs|rbd|quobyte|storageos|portworx-volume|scaleio)$/,
  // The old nfs-client provisioner's default name (kubernetes-incubator external-storage nfs-client,
  // PROVISIONER_NAME): it makes each claim a folder of one NFS share, which the node mounts.
  /^fuseim\.pri\/ifs$/,
  // A name with a network file system's own word: the NFS subdir and Ganesha provisioners
  // (`k8s-sigs.io/nfs-subdir-external-provisioner`, `cluster.local/nfs-client`, `example.com/nfs`), SMB, CIFS, and
  // the FUSE clients of network stores (JuiceFS `csi.juicefs.com` and its other registrations, SeaweedFS, GCS FUSE).
  /(^|[./_-])(nfs|smb|cifs|cephfs|glusterfs|sshfs|s3fs|juicefs|seaweedfs|gcsfuse)([./_-]|$)/,
];

/** Drivers that hand out a folder or disk of the node itself. */
const HOST_DRIVERS: readonly RegExp[] = [
  /^hostpath\.csi\.k8s\.io$/,
  /^csi-hostpath/,
  /^kubevirt\.io\.hostpath-provisioner$/,
  /^hostpath\.csi\.kubevirt\.io$/,
  /^(local|rawfile|zfs|lvm)\.csi\.openebs\.io$/,
  /^topolvm\.(io|cybozu\.com)$/,
  /^lvm\.csi\.metal-stack\.io$/,
  /^local\.csi\.k8s\.io$/,
  // Provisioners that make each claim of a StorageClass a folder on the node (Rancher local-path-provisioner,
  // OpenEBS Local PV hostpath, MicroK8s and minikube hostpath, KubeVirt's and Docker Desktop's).
  /^(rancher\.io\/local-path|openebs\.io\/local|microk8s\.io\/hostpath|k8s\.io\/minikube-hostpath)$/,
  /^(kubevirt\.io\/hostpath-provisioner|docker\.io\/hostpath)$/,
  /^[^/]+\/local-path(-provisioner)?$/,
];

/**
 * Drivers known to mount only what the pod's own objects say into a volume of the pod: cert-manager's csi-driver
 * (a certificate and key issued for the pod, on a tmpfs). The Secrets Store CSI driver is judged as a Secret volume
 * by the secret rules and passes here.
 */
export const SAFE_CSI_DRIVERS: readonly string[] = ["csi.cert-manager.io", "secrets-store.csi.k8s.io"];

/** What the node does for a driver: a network mount, a host folder, safe, or not known (fails closed). */
export function csiDriverClass(driver: string): "network" | "host" | "safe" | "unknown" {
  if (SAFE_CSI_DRIVERS.includes(driver)) return "safe";
  const d = driver.trim().toLowerCase();
  if (NETWORK_DRIVERS.some((re) => re.test(d))) return "network";
  if (HOST_DRIVERS.some((re) => re.test(d))) return "host";
  return "unknown";
}
