/**
 * Class 7 (Docker users): the daemon resolves `User` with moby/sys/user `GetExecUser`, which starts from
 * uid 0 and gid 0 and takes the gid from the image's passwd entry for the user. With no group part (`1000`, `1000:`,
 * a name) the gid is the image's, and 0 (the root group) when the image has no entry for the uid (busybox has none
 * for 1000); the policy cannot see the image, so the root-group check fails closed, in Engine bodies, docker.Container
 * and Compose alike, unless `allowRootGroup` is set. A user with its group (`1000:1000`) is unchanged.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DOCKER, safeContainer } from "../../policy/fixtures";
import { validate, violated } from "../../policy/harness";
import { compose, engineBody } from "../fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "../harness";

const RULE = "sandbox-require-non-root";
const NO_GROUP = fc.constantFrom("1000", "1000:", "+1000", "01000", " 1000", "app", "operator", "nobody:");
const WITH_GROUP = fc.constantFrom("1000:1000", "+1000:1000", "01000:01000", "app:app", "1000:staff");

const body = (user: string) => ({ "create.json": engineBody({ User: user }) });
const service = (user: string) => ({
  "compose.yaml": compose("app").replace('user: "1000:1000"', `user: ${JSON.stringify(user)}`),
});
const pack = (user: string, config?: Record<string, object>) =>
  violated(validate(DOCKER, { ...safeContainer(), user }, config === undefined ? {} : { config }));

describe("class 7: a user without a group may run with gid 0 (generated)", () => {
  it("the plain spelling 1000:0 is the root group", async () => {
    assertVerdict(await scanFiles(body("1000:0")), blocked(RULE));
    expect(pack("1000:0")).toContain(RULE);
  });
  it("every user spelled without a group gets the same verdict in every format", async () => {
    await fc.assert(
      fc.asyncProperty(NO_GROUP, async (user) => {
        const r = await scanFiles(body(user));
        assertVerdict(r, blocked(RULE));
        expect(r.report.findings.find((f) => f.ruleId === RULE)?.message).toContain("names no group");
        assertVerdict(await scanFiles(service(user)), blocked(RULE));
        expect(pack(user)).toContain(RULE);
      }),
      { numRuns: 16 },
    );
  });
  it("allowRootGroup lets it pass, as it lets 1000:0 pass", () => {
    const config = { "sandbox-require-non-root": { allowRootGroup: true } };
    expect(pack("1000", config)).toEqual([]);
    expect(pack("1000:0", config)).toEqual([]);
  });
});

describe("class 7: a user with its group passes (no new false denial)", () => {
  it("in every format", async () => {
    await fc.assert(
      fc.asyncProperty(WITH_GROUP, async (user) => {
        assertVerdict(await scanFiles(body(user)), passes);
        assertVerdict(await scanFiles(service(user)), passes);
        expect(pack(user)).toEqual([]);
      }),
      { numRuns: 10 },
    );
  });
});
