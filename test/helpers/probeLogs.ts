/**
 * What the probe prints inside a hardened default template on Docker (measured with runc: CapEff 0, NoNewPrivs 1,
 * Seccomp 2, pids.max 128): the fixture tests break one line of.
 */
export const HARDENED_PROBE_LOGS = [
  "probe.id=1000:1000",
  "probe.release=6.1.0-28-amd64",
  "probe.kernel=host",
  "probe.CapPrm=0000000000000000",
  "probe.CapEff=0000000000000000",
  "probe.CapBnd=0000000000000000",
  "probe.NoNewPrivs=1",
  "probe.Seccomp=2",
  "probe.pidsMax=128",
  "probe.tmpSizeKb=65536",
  "probe.rootWrite=denied",
  "probe.tmpWrite=allowed",
  "probe.jobWrite=allowed",
  "probe.ping=denied",
  "probe.mknod=denied",
  "probe.chroot=denied",
  "probe.ipLinkAdd=denied",
  "probe.egress=denied",
  "probe.done=1",
].join("\n");
