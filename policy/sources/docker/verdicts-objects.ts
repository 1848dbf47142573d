/**
 * The verdict of every field of a network create body (`POST /networks/create`) and of a volume create body
 * (`POST /volumes/create`) at the claimed Engine API version; the conformance test walks the generated tables as it
 * does the container body's. A plugin's `config.json` has no table: a plugin runs on the host outside every wall, so
 * the object is refused whole (sandbox-disallow-unjudged-workloads), whatever its fields.
 */
import { RULES } from "../rule-ids";
import { inert, judged, refused, type VerdictTable } from "../verdict";

/** Drivers whose networks stay on the engine's host and give no address on the host's own network. */
const LOCAL_DRIVERS = new Set(["bridge", "null", "none"]);

export const NETWORK_CREATE_VERDICTS: VerdictTable = {
  Name: inert("the network's name"),
  Driver: refused(
    "a driver other than bridge gives the containers addresses on the host's network (macvlan, ipvlan), spans machines (overlay) or is a plugin the rules cannot read",
    (v) => typeof v === "string" && LOCAL_DRIVERS.has(v),
  ),
  Scope: refused("a swarm-scoped network spans the machines of a cluster", (v) => v === "local"),
  EnableIPv4: inert("whether the network has IPv4 addresses"),
  EnableIPv6: inert("whether the network has IPv6 addresses"),
  IPAM: inert("the network's address ranges"),
  Internal: inert(
    "no route off the host: it can only tighten (judged for tasks by sandbox-require-proxy-only-egress)",
  ),
  Attachable: refused("lets standalone containers join a swarm network"),
  Ingress: refused("the swarm routing mesh, which publishes ports on every node"),
  ConfigOnly: inert("a configuration other networks copy; no container joins it"),
  ConfigFrom: refused("copies the configuration of another network, which this body does not show"),
  Options: judged([RULES.openBridge], {
    Options: { "com.docker.network.bridge.gateway_mode_ipv4": "routed" },
  }),
  Labels: inert("metadata"),
};

export const VOLUME_CREATE_VERDICTS: VerdictTable = {
  Name: inert("the volume's name"),
  Driver: judged([RULES.hostPathClaims], { Driver: "local-persist", DriverOpts: { mountpoint: "/etc" } }),
  DriverOpts: judged([RULES.hostPathClaims], { DriverOpts: { type: "none", o: "bind", device: "/etc" } }),
  Labels: inert("metadata"),
  ClusterVolumeSpec: refused(
    "a Swarm cluster volume, provisioned by a CSI plugin on whichever node the rules cannot read",
  ),
};
