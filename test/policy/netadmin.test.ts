import { describe, expect, it } from "vitest";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec, sc } from "./fixtures";
import { validate } from "./harness";

const RULE = "sandbox-require-drop-net-admin";

/** [drops, adds, violates the NET_ADMIN rule] */
const CASES: [unknown, unknown, boolean][] = [
  [["ALL"], undefined, false],
  [["all"], undefined, false],
  [["CAP_ALL"], undefined, false],
  [["NET_ADMIN"], undefined, false],
  [["net_admin"], undefined, false],
  [["cap_net_admin"], undefined, false],
  [["CAP_NET_ADMIN"], undefined, false],
  [["Net_Admin"], undefined, false],
  [[" NET_ADMIN"], undefined, false],
  [["NET_ADMIN "], undefined, false],
  [["NET_RAW", "MKNOD"], undefined, true],
  [[], undefined, true],
  [undefined, undefined, true],
  [null, undefined, true],
  [["NETADMIN"], undefined, true],
  [["ALL"], ["NET_ADMIN"], true],
  [["ALL"], ["cap_net_admin"], true],
  [["ALL"], [" Net_Admin "], true],
  [["ALL"], ["ALL"], true],
  [["NET_ADMIN"], ["NET_ADMIN"], true],
  [["ALL"], ["NET_BIND_SERVICE"], false],
];

describe.each(CASES)("drops %j, adds %j", (drops, adds, bad) => {
  it("docker.Container", () => {
    const c = copy(safeContainer());
    c.capabilities = { drops, adds };
    expect(validate(DOCKER, c).violations.some((v) => v.policy === RULE)).toBe(bad);
  });

  it.each(["containers", "initContainers", "ephemeralContainers"])("kubernetes %s", (list) => {
    const spec = copy(safePodSpec());
    const c = copy(first(spec));
    c.name = "x";
    sc(c).capabilities = { drop: drops, add: adds };
    if (list === "containers") (spec.containers as object[]).push(c);
    else spec[list] = [c];
    const o = validate("kubernetes:apps/v1:StatefulSet", carrier("StatefulSet").build(spec));
    expect(o.violations.some((v) => v.policy === RULE)).toBe(bad);
  });
});

it("names the container and what it drops", () => {
  const spec = copy(safePodSpec());
  sc(first(spec)).capabilities = { drop: ["NET_RAW", "mknod"] };
  const o = validate("kubernetes:core/v1:Pod", carrier("Pod").build(spec));
  expect(o.violations.filter((v) => v.policy === RULE).map((v) => v.message)).toEqual([
    'container "task" drops only [NET_RAW, mknod]; its drop list must contain NET_ADMIN or ALL [spec.containers[0]]',
  ]);
});
