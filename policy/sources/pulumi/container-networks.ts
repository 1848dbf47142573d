/** The networks a `docker.Container` joins, as the local provider and the engine join them. */
import { isUnknown, type NetworkView } from "../../workload";
import { field, join, list, str } from "../lenient";

/**
 * The networks a container joins, as the local provider and the engine join them: the network mode (the daemon's
 * `bridge` when unset or empty) at create, then every `networksAdvanced` entry. A list that cannot be read stands as one
 * entry at `networksAdvanced` whose name is the list's unknown or unreadable value.
 */
export function dockerNetworks(props: unknown): NetworkView[] {
  const mode = str(field(props, "networkMode"));
  const out: NetworkView[] = [
    { name: mode === undefined || mode === "" ? "bridge" : mode, path: "networkMode", driver: undefined },
  ];
  const advanced = list(field(props, "networksAdvanced"));
  if (isUnknown(advanced)) return [...out, { name: advanced, path: "networksAdvanced", driver: undefined }];
  (advanced ?? []).forEach((n, i) => {
    out.push({
      name: str(field(n, "name")),
      path: join("networksAdvanced", i),
      driver: str(field(n, "driver")),
    });
  });
  return out;
}

/**
 * Joined networks whose driver is known to put the container on the host's own network (the scanner's Compose
 * reader writes the driver it read from the project's network definitions).
 */
export function hostLanNetworks(
  networks: readonly NetworkView[],
): { name: string; driver: string; path: string }[] {
  // The first network is the network mode, which names no driver.
  return networks
    .slice(1)
    .flatMap((n, i) =>
      typeof n.driver === "string" && /^(?:macvlan|ipvlan)$/i.test(n.driver.trim())
        ? [{ name: typeof n.name === "string" ? n.name : `#${i}`, driver: n.driver.trim(), path: n.path }]
        : [],
    );
}
