import { describe, expect, it } from "vitest";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec, sc } from "./fixtures";
import { validate } from "./harness";

const RULE = "sandbox-require-drop-net-admin";

/**
 * [drops, adds, violates on Docker, violates on Kubernetes]. Docker trims, ignores case and strips `CAP_`; on
 * Kubernetes containerd's CRI (`WithCapabilities`) takes `ALL` in any case and otherwise sends `"CAP_" + upper`,
 * untrimmed, so a `CAP_` prefix or a space names no capability there and drops nothing.
 */
const CASES: [unknown, unknown, boolean, boolean][] = [
  [["ALL"], undefined, false, false],
  [["all"], undefined, false, false],
  [["CAP_ALL"], undefined, false, true],
  [["NET_ADMIN"], undefined, false, false],
  [["net_admin"], undefined, false, false],
  [["cap_net_admin"], undefined, false, true],
  [["CAP_NET_ADMIN"], undefined, false, true],
  [["Net_Admin"], undefined, false, false],
  [[" NET_ADMIN"], undefined, false, true],
  [["NET_ADMIN "], undefined, false, true],
  [["NET_RAW", "MKNOD"], undefined, true, true],
  [[], undefined, true, true],
  [undefined, undefined, true, true],
  [null, undefined, true, true],
  [["NETADMIN"], undefined, true, true],
  [["ALL"], ["NET_ADMIN"], true, true],
  [["ALL"], ["cap_net_admin"], true, true],
  [["ALL"], [" Net_Admin "], true, true],
  [["ALL"], ["ALL"], true, true],
  [["NET_ADMIN"], ["NET_ADMIN"], true, true],
  [["ALL"], ["NET_BIND_SERVICE"], false, false],
];

describe.each(CASES)("drops %j, adds %j", (drops, adds, bad, kubeBad) => {
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
    expect(o.violations.some((v) => v.policy === RULE)).toBe(kubeBad);
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
