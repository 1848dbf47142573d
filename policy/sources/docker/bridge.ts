/**
 * Options of Docker's bridge driver that reach the host, as libnetwork's bridge driver reads them (drivers/bridge
 * labels and option parsing, moby v28): each turns off a wall the project's networks rely on.
 *
 * - `com.docker.network.bridge.gateway_mode_ipv4`/`_ipv6`: `routed` and `nat-unprotected` make the containers'
 *   addresses reachable from the host's network without a published port (no way in, gone);
 * - `com.docker.network.bridge.name`: a bridge that already exists is used as it is: `docker0` is the default bridge,
 *   `br-<id>` another Docker network's, `virbr*`, `lxdbr*`, `cni*`... the host's other bridges; joining one puts the
 *   task on their network;
 * - `com.docker.network.bridge.enable_icc` true (strconv.ParseBool: `1`, `t`, `T`, `TRUE`, `true`, `True`):
 *   containers on the network reach each other (task to task);
 * - `com.docker.network.bridge.trusted_host_interfaces`: host interfaces whose traffic reaches the containers
 *   directly.
 * Option keys are exact (a map lookup); values are as the driver parses them.
 */

const PREFIX = "com.docker.network.bridge.";
const OPEN_GATEWAY_MODES = new Set(["routed", "nat-unprotected"]);
const GO_TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
/** Bridges a host already has: Docker's default and per-network bridges, and those of other tools. */
const HOST_BRIDGES =
  /^(?:docker\d*|br-[0-9a-f]+|virbr\d*|lxdbr\d*|lxcbr\d*|incusbr\d*|cni\d*|cbr0|kube-bridge|podman\d*|flannel\.\d+|cilium_host|weave)$/;

/** What one bridge option opens, or undefined. */
export function bridgeOptionProblem(key: string, value: unknown): string | undefined {
  if (!key.startsWith(PREFIX)) return undefined;
  const v = typeof value === "string" ? value : typeof value === "boolean" ? String(value) : undefined;
  if (v === undefined) return undefined;
  switch (key.slice(PREFIX.length)) {
    case "gateway_mode_ipv4":
    case "gateway_mode_ipv6":
      return OPEN_GATEWAY_MODES.has(v)
        ? `gateway mode ${v} makes the containers' addresses reachable from the host's network without a published port`
        : undefined;
    case "name":
      return HOST_BRIDGES.test(v)
        ? `the bridge ${JSON.stringify(v)} is one the host already has (Docker's default or another network's, or another tool's): the containers join its network`
        : undefined;
    case "enable_icc":
      return GO_TRUE.has(v)
        ? "inter-container traffic is on: tasks on the network reach each other"
        : undefined;
    case "trusted_host_interfaces":
      return v.trim() === ""
        ? undefined
        : `traffic from the host interfaces ${JSON.stringify(v)} reaches the containers directly`;
    default:
      return undefined;
  }
}

/** Every problem of a bridge network's options, by key. */
export function bridgeOptionProblems(options: unknown): { key: string; reason: string }[] {
  if (typeof options !== "object" || options === null || Array.isArray(options)) return [];
  return Object.entries(options).flatMap(([key, value]) => {
    const reason = bridgeOptionProblem(key, value);
    return reason === undefined ? [] : [{ key, reason }];
  });
}
