/** A hardened `docker.Container` and the rules a variation of it fails, for the docker.Container tests. */

import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { adaptResources } from "../../../../policy/sources/subject";

export const CONTAINER_TYPE = "docker:index/container:Container";

/** Props every rule passes. */
export const HARDENED = {
  image: "busybox:1.36",
  user: "1000:1000",
  readOnly: true,
  capabilities: { drops: ["ALL"] },
  securityOpts: ["no-new-privileges"],
  networkMode: "none",
  memory: 128,
  cpus: "0.5",
  restart: "no",
};

/** The rules that refuse {@link HARDENED} with `props` laid over it (an `undefined` value removes the prop). */
export function failing(
  props: Record<string, unknown>,
  config: Readonly<Record<string, object>> = {},
): string[] {
  const p = Object.fromEntries(Object.entries({ ...HARDENED, ...props }).filter(([, v]) => v !== undefined));
  return adaptResources(CONTAINER_TYPE, p, "c").flatMap((v) =>
    judge(v, ALL_RULES, config)
      .filter((r) => r.findings.some((f) => !f.unchecked))
      .map((r) => r.rule.id),
  );
}
