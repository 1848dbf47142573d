/** sandbox-disallow-open-bridge: the bridge options that reach the host, as libnetwork's bridge driver reads them. */
import { describe, expect, it } from "vitest";
import { checkBridgeOptions, DOCKER_NETWORK_TYPE } from "../../../policy/stack/disallow-open-bridge";
import { UNKNOWN } from "../../../policy/workload";

const net = (props: unknown, name = "tasks") => ({
  type: DOCKER_NETWORK_TYPE,
  name,
  urn: `urn:${name}`,
  props,
});
const messages = (props: unknown) => checkBridgeOptions([net(props)]).map((f) => f.message);

describe("sandbox-disallow-open-bridge", () => {
  it("passes the project's own network (inter-container traffic off) and a plain one", () => {
    expect(
      messages({ internal: true, options: { "com.docker.network.bridge.enable_icc": "false" } }),
    ).toEqual([]);
    expect(messages({ name: "n" })).toEqual([]);
  });

  it.each([
    ["com.docker.network.bridge.gateway_mode_ipv4", "routed", /gateway mode routed/],
    ["com.docker.network.bridge.gateway_mode_ipv6", "nat-unprotected", /gateway mode nat-unprotected/],
    ["com.docker.network.bridge.name", "docker0", /the bridge "docker0" is one the host already has/],
    ["com.docker.network.bridge.name", "br-0123456789ab", /one the host already has/],
    ["com.docker.network.bridge.enable_icc", "1", /inter-container traffic is on/],
    ["com.docker.network.bridge.enable_icc", "True", /inter-container traffic is on/],
    ["com.docker.network.bridge.trusted_host_interfaces", "eth0", /host interfaces "eth0"/],
  ])("refuses %s=%s", (key, value, re) => {
    const m = messages({ options: { [key]: value } });
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it("passes values that open nothing: nat and isolated gateways, a new bridge name, a key in another case", () => {
    expect(
      messages({
        options: {
          "com.docker.network.bridge.gateway_mode_ipv4": "isolated",
          "com.docker.network.bridge.gateway_mode_ipv6": "nat",
          "com.docker.network.bridge.name": "sandbox-tasks0",
          "com.docker.network.bridge.enable_icc": "false",
          // The driver looks options up by their exact key: this one it never reads.
          "COM.DOCKER.NETWORK.BRIDGE.ENABLE_ICC": "true",
        },
      }),
    ).toEqual([]);
  });

  it("reads bridge options on bridge networks only, and says when the options are not known yet", () => {
    // The overlay network fails for its driver alone: the bridge driver's options mean nothing to it.
    expect(
      messages({ driver: "overlay", options: { "com.docker.network.bridge.enable_icc": "true" } }),
    ).toEqual([expect.stringMatching(/^network "tasks": driver: a driver other than bridge/)]);
    const f = checkBridgeOptions([net({ options: UNKNOWN })]);
    expect(f.map((x) => x.unchecked)).toEqual([true]);
  });

  it.each(["macvlan", "ipvlan", "overlay", "weave/net", "Bridge", " bridge"])(
    "refuses a docker.Network of driver %j: host-network addresses, many machines, or a plugin",
    (driver) => {
      expect(messages({ driver })).toEqual([
        expect.stringMatching(
          /driver: a driver other than bridge gives the containers addresses on the host's network/,
        ),
      ]);
    },
  );

  it("refuses a driver not known yet, and passes the engine's own local drivers", () => {
    expect(messages({ driver: UNKNOWN })).toHaveLength(1);
    for (const driver of ["bridge", "null", "none", "", undefined]) expect(messages({ driver })).toEqual([]);
  });

  it("refuses the swarm inputs (attachable, ingress) when set, and passes them off", () => {
    expect(messages({ attachable: true, ingress: true }).map((m) => m.split(":")[1]?.trim())).toEqual([
      "attachable",
      "ingress",
    ]);
    expect(messages({ attachable: false, ingress: false })).toEqual([]);
  });

  it("says a refused Engine body field once, not again as the provider's input", () => {
    const f = checkBridgeOptions([
      net({ driver: "macvlan", unjudgedFields: [{ path: "Driver", reason: "the body's own reason" }] }),
    ]);
    expect(f.map((x) => x.message)).toEqual(['network "tasks": Driver: the body\'s own reason']);
  });
});
