/**
 * Class 7 (Docker seccomp): a `seccomp=<value>` security option's value is the profile's JSON text (moby
 * `WithSeccomp` -> `seccomp.LoadProfile`; the docker CLI and Compose read `seccomp=<file>` and send its contents).
 * moby/profiles `setupSeccomp` reads no default action and no syscalls (`null`, `{}`) as seccomp disabled, and a
 * default action that lets syscalls run (SCMP_ACT_ALLOW, SCMP_ACT_LOG) filters only what the profile names: both are
 * unconfined, in Engine bodies, docker.Container `securityOpts` and Compose `security_opt` (inline or a file), with
 * field names in any case and the last repeated key winning (encoding/json).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DOCKER, safeContainer } from "../../policy/fixtures";
import { validate, violated } from "../../policy/harness";
import { compose, engineBody } from "../fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "../harness";

const RULE = "sandbox-disallow-unconfined-seccomp";
const UNCONFINED = blocked(RULE);
const NNP = "no-new-privileges:true";

const bodyWith = (opt: string) => ({ "create.json": engineBody({}, { SecurityOpt: [NNP, opt] }) });
const composeWith = (profile: string) => ({
  "compose.yaml": compose("app").replace(
    'security_opt: ["no-new-privileges:true"]',
    'security_opt: ["no-new-privileges:true", "seccomp=./profile.json"]',
  ),
  "profile.json": profile,
});
const pack = (opt: string) => violated(validate(DOCKER, { ...safeContainer(), securityOpts: [NNP, opt] }));

/** Spellings of the `defaultAction` key that encoding/json matches to the field. */
const KEY = fc.constantFrom("defaultAction", "defaultaction", "DEFAULTACTION", "DefaultAction");

/** Profiles the daemon loads as no filter, or as a filter that lets every unnamed syscall run. */
const OPEN_PROFILE = fc.oneof(
  fc.constantFrom("null", "{}", " { } ", '{"syscalls": []}', '{"defaultAction": ""}', '{"syscalls": null}'),
  fc
    .tuple(KEY, fc.constantFrom("SCMP_ACT_ALLOW", "SCMP_ACT_LOG"), fc.boolean())
    .map(([k, a, named]) =>
      named
        ? `{"${k}": "${a}", "syscalls": [{"names": ["reboot"], "action": "SCMP_ACT_ERRNO"}]}`
        : `{"${k}": "${a}"}`,
    ),
  // The last of repeated keys wins, whatever its case.
  KEY.map((k) => `{"defaultAction": "SCMP_ACT_ERRNO", "${k}": "SCMP_ACT_ALLOW"}`),
  // An allow-list that lets user namespaces and mounts run without a condition.
  fc
    .constantFrom("unshare", "mount", "setns", "clone", "bpf", "init_module")
    .map(
      (n) =>
        `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read", "${n}"], "action": "SCMP_ACT_ALLOW"}]}`,
    ),
);
const SEPARATOR = fc.constantFrom("seccomp=", "seccomp:");

/** Allow-lists shaped like Docker's own: they confine. */
const CONFINED = [
  '{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read", "write", "exit_group"], "action": "SCMP_ACT_ALLOW"}]}',
  '{"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1, "syscalls": [{"names": ["mount", "unshare"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}}]}',
  '{"defaultAction": "SCMP_ACT_KILL_PROCESS", "syscalls": [{"names": ["clone"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 2114060288, "op": "SCMP_CMP_MASKED_EQ"}]}]}',
];

describe("class 7: a seccomp profile is judged by its content (generated)", () => {
  it("the plain spelling seccomp=unconfined is unconfined", async () => {
    assertVerdict(await scanFiles(bodyWith("seccomp=unconfined")), UNCONFINED);
    expect(pack("seccomp=unconfined")).toContain(RULE);
  });
  it("an open profile inline in an Engine body and in docker.Container securityOpts gets the same verdict", async () => {
    await fc.assert(
      fc.asyncProperty(SEPARATOR, OPEN_PROFILE, async (sep, profile) => {
        assertVerdict(await scanFiles(bodyWith(`${sep}${profile}`)), UNCONFINED);
        expect(pack(`${sep}${profile}`)).toContain(RULE);
      }),
      { numRuns: 40 },
    );
  });
  it("an open profile in a Compose seccomp=<file> gets the same verdict", async () => {
    await fc.assert(
      fc.asyncProperty(OPEN_PROFILE, async (profile) => {
        assertVerdict(await scanFiles(composeWith(profile)), UNCONFINED);
      }),
      { numRuns: 15 },
    );
  });
  it("the message names the option and why the profile does not confine", async () => {
    const r = await scanFiles(bodyWith('seccomp={"defaultAction":"SCMP_ACT_LOG"}'));
    const m = r.report.findings.find((f) => f.ruleId === RULE)?.message ?? "";
    expect(m).toContain("HostConfig.SecurityOpt");
    expect(m).toContain("SCMP_ACT_LOG");
  });
});

describe("class 7: confining profiles pass (no new false denial)", () => {
  it("an allow-list profile, inline, in the pack and as a Compose file", async () => {
    for (const profile of CONFINED) {
      assertVerdict(await scanFiles(bodyWith(`seccomp=${profile}`)), passes);
      expect(pack(`seccomp=${profile}`)).toEqual([]);
      assertVerdict(await scanFiles(composeWith(profile)), passes);
    }
  });
  it("seccomp=builtin and no seccomp option are Docker's default profile", async () => {
    assertVerdict(await scanFiles(bodyWith("seccomp=builtin")), passes);
    assertVerdict(await scanFiles({ "create.json": engineBody() }), passes);
  });
});

describe("class 7: a seccomp value the daemon cannot load fails closed", () => {
  it("a file path in an Engine body or docker.Container (the daemon reads no file), a wrong type, an unknown action", async () => {
    for (const opt of [
      "seccomp=/etc/docker/seccomp.json",
      'seccomp={"defaultAction": 1}',
      "seccomp=[]",
      'seccomp={"defaultAction": "SCMP_ACT_MAYBE"}',
    ]) {
      assertVerdict(await scanFiles(bodyWith(opt)), UNCONFINED);
      expect(pack(opt)).toContain(RULE);
    }
  });
  it("a Compose profile file that cannot be read", async () => {
    const files = composeWith("{}");
    const { "profile.json": _gone, ...rest } = files;
    const r = await scanFiles(rest);
    assertVerdict(r, UNCONFINED);
    expect(r.report.findings.find((f) => f.ruleId === RULE)?.message).toContain("profile.json");
  });
});
