import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PROXY_USER, parseUser, UserSchema } from "../../components/model";

describe("parseUser", () => {
  it("reads the ids of a uid:gid user", () => {
    expect(parseUser("1000:1000")).toEqual({ uid: 1000, gid: 1000 });
    expect(parseUser("2000:3000")).toEqual({ uid: 2000, gid: 3000 });
    expect(parseUser(PROXY_USER)).toEqual({ uid: 13, gid: 13 });
  });

  it.each(["root", "1000", "1000:", ":1000", "a:b", "1000:1000:1", " 1000:1000", ""])(
    "refuses %j",
    (user) => {
      expect(() => parseUser(user)).toThrow(`user "${user}" is not "uid:gid" with numeric ids`);
    },
  );

  it("reads every user the schema accepts", () => {
    const id = fc.integer({ min: 1, max: 9_999_999_999 });
    fc.assert(
      fc.property(id, id, (uid, gid) => {
        expect(parseUser(UserSchema.parse(`${uid}:${gid}`))).toEqual({ uid, gid });
      }),
    );
  });
});
