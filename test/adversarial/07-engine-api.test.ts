/**
 * Class 7: Engine API fields as moby reads them (api/types/container HostConfig, docker v28): UTSMode "host" shares
 * the host's UTS namespace; MaskedPaths: [] and ReadonlyPaths: [] are what `--security-opt systempaths=unconfined`
 * sends (nothing masked in /proc); DeviceCgroupRules open device access; VolumesFrom takes another container's mounts,
 * which the body does not show; User is resolved by the runtime, where "+0", "00", "0:0", "root" and "0:1000" are uid 0
 * (strconv.Atoi accepts a sign and leading zeros).
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { engineBody } from "./fixtures";
import { assertVerdict, blocked, cases, passes, scanFiles } from "./harness";

const host = (h: Record<string, unknown>) => ({ "create.json": engineBody({}, h) });

cases("class 7: HostConfig fields", [
  {
    name: 'UTSMode: "host"',
    files: host({ UTSMode: "host" }),
    plain: host({ PidMode: "host" }),
    want: blocked("sandbox-disallow-host-namespaces"),
  },
  {
    name: "MaskedPaths: [] (systempaths=unconfined)",
    files: host({ MaskedPaths: [] }),
    plain: host({ SecurityOpt: ["no-new-privileges:true", "systempaths=unconfined"] }),
    want: blocked("sandbox-disallow-unmasked-proc"),
  },
  {
    name: "ReadonlyPaths: [] with MaskedPaths: []",
    files: host({ MaskedPaths: [], ReadonlyPaths: [] }),
    plain: host({ SecurityOpt: ["no-new-privileges:true", "systempaths=unconfined"] }),
    want: blocked("sandbox-disallow-unmasked-proc"),
  },
  {
    name: 'DeviceCgroupRules: ["c *:* rwm"]',
    files: host({ DeviceCgroupRules: ["c *:* rwm"] }),
    plain: host({
      Devices: [{ PathOnHost: "/dev/sda", PathInContainer: "/dev/sda", CgroupPermissions: "rwm" }],
    }),
    want: blocked("sandbox-disallow-devices"),
  },
  {
    name: 'VolumesFrom: ["other"] (mounts the body does not show)',
    files: host({ VolumesFrom: ["other:rw"] }),
    plain: host({ Binds: ["/var/run/docker.sock:/s"] }),
    want: blocked(),
  },
  {
    name: 'CgroupnsMode: "host"',
    files: host({ CgroupnsMode: "host" }),
    plain: host({ PidMode: "host" }),
    want: blocked("sandbox-disallow-host-namespaces"),
  },
  {
    name: 'UsernsMode: "host"',
    files: host({ UsernsMode: "host" }),
    plain: host({ PidMode: "host" }),
    want: blocked("sandbox-disallow-host-namespaces"),
  },
  {
    name: 'PidMode: "container:abc" (another container\'s namespace)',
    files: host({ PidMode: "container:abc" }),
    plain: host({ PidMode: "host" }),
    want: blocked("sandbox-disallow-host-namespaces"),
  },
]);

const ROOT_USERS = [
  "0",
  "+0",
  "00",
  "000",
  "0:0",
  "root",
  "root:root",
  "0:1000",
  "+0:+0",
  "00:00",
  "root:1000",
  "",
];
// "1000" alone is not here: with no group the gid is the image's passwd entry's, 0 when there is none.
const SAFE_USERS = ["1000:1000", "+1000:1000", "01000:01000", "1000:+1000"];

describe("class 7: User as the runtime resolves it (generated)", () => {
  it("every spelling of uid 0 (and no user: the image's default) is root", async () => {
    assertVerdict(
      await scanFiles({ "create.json": engineBody({ User: "0" }) }),
      blocked("sandbox-require-non-root"),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROOT_USERS), async (u) => {
        assertVerdict(
          await scanFiles({ "create.json": engineBody({ User: u }) }),
          blocked("sandbox-require-non-root"),
        );
      }),
      { numRuns: 30 },
    );
  });
  it("uid 1000 with a sign or leading zeros is not root (no false denial)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SAFE_USERS), async (u) => {
        assertVerdict(await scanFiles({ "create.json": engineBody({ User: u }) }), passes);
      }),
      { numRuns: 10 },
    );
  });
});
