/**
 * The verdict of every input of `docker.Network` and `docker.Volume` (@pulumi/docker 5.2.0 `NetworkArgs`,
 * `VolumeArgs`), as the Engine create bodies' tables (docker/verdicts-objects.ts) judge the fields the provider sends
 * them to: test/policy/sources/pulumi/docker-objects.test.ts fails on an input with no verdict. A refused input that
 * a network sets fails sandbox-disallow-open-bridge; a volume's, sandbox-disallow-host-path-claims.
 */
import { RULES as R } from "../rule-ids";
import { inert, judged, refused, type VerdictTable } from "../verdict";

/** Drivers whose networks stay on the engine's host and give no address on the host's own network. */
const LOCAL_DRIVERS = new Set(["bridge", "null", "none"]);

export const DOCKER_NETWORK_VERDICTS: VerdictTable = {
  attachable: refused("lets standalone containers join a swarm network"),
  driver: refused(
    "a driver other than bridge gives the containers addresses on the host's network (macvlan, ipvlan), spans machines (overlay) or is a plugin the rules cannot read",
    (v) => typeof v === "string" && LOCAL_DRIVERS.has(v),
  ),
  ingress: refused("the swarm routing mesh, which publishes ports on every node"),
  internal: inert(
    "no route off the host: it can only tighten (judged for tasks by sandbox-require-proxy-only-egress)",
  ),
  ipamConfigs: inert("the network's address ranges"),
  ipamDriver: inert(
    "which driver hands out the addresses; a driver other than the engine's own is a plugin, which only docker.Plugin (refused) installs",
  ),
  ipamOptions: inert("options of the address driver"),
  ipv6: inert("whether the network has IPv6 addresses"),
  labels: inert("metadata"),
  name: inert("the network's name"),
  options: judged([R.openBridge], { options: { "com.docker.network.bridge.gateway_mode_ipv4": "routed" } }),
};

export const DOCKER_VOLUME_VERDICTS: VerdictTable = {
  cluster: refused(
    "a Swarm cluster volume, provisioned by a CSI plugin on whichever node the rules cannot read",
  ),
  driver: judged([R.hostPathClaims], { driver: "local-persist", driverOpts: { mountpoint: "/etc" } }),
  driverOpts: judged([R.hostPathClaims], { driverOpts: { type: "none", o: "bind", device: "/etc" } }),
  labels: inert("metadata"),
  name: inert("the volume's name"),
};
