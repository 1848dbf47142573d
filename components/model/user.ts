import { z } from "zod";

const USER_RULE = 'user must be "uid:gid" with numbers above 0, such as "1000:1000"';

/** `uid:gid` a task runs as, both numeric; root (0) is refused. */
export const UserSchema = z
  .string({ error: USER_RULE })
  .regex(/^\d{1,10}:\d{1,10}$/, { error: USER_RULE, abort: true })
  .refine(
    (u) => {
      const { uid, gid } = parseUser(u);
      return uid > 0 && gid > 0;
    },
    { error: `root is not allowed; ${USER_RULE}` },
  );

/**
 * The ids of a `uid:gid` user, the form every user the toolkit runs has (a template's, checked by
 * {@link UserSchema}, and the proxy's). Throws on any other form: a user name or a missing group cannot be turned
 * into the ids a folder's owner or a pod's security context needs.
 */
export function parseUser(user: string): { uid: number; gid: number } {
  const m = /^(\d+):(\d+)$/.exec(user);
  if (m?.[1] === undefined || m[2] === undefined) {
    throw new Error(`user "${user}" is not "uid:gid" with numeric ids`);
  }
  return { uid: Number(m[1]), gid: Number(m[2]) };
}
