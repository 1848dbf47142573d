/** `docker:index/network:Network`: a network on the engine. */
import { isNotFound } from "../../runtime/docker/client";
import { engineLabels, labelsList, objectName, overlay, type Props, type ResourceKind } from "./kind";

export const NETWORK = "docker:index/network:Network";

export const network: ResourceKind = {
  type: NETWORK,
  inputs: ["name", "driver", "internal", "attachable", "options", "labels", "ipamConfigs", "ipamDriver"],
  outputs: ["scope"],
  inPlace: [],

  async create(docker, urn, p) {
    const name = objectName(p, urn);
    const ipam = p.ipamConfigs as { subnet?: string; gateway?: string; ipRange?: string }[] | undefined;
    const net = await docker.createNetwork({
      Name: name,
      Driver: (p.driver as string | undefined) ?? "bridge",
      Internal: (p.internal as boolean | undefined) ?? false,
      Attachable: (p.attachable as boolean | undefined) ?? false,
      Options: (p.options as Record<string, string> | undefined) ?? {},
      Labels: engineLabels(p.labels, urn),
      CheckDuplicate: true,
      ...(ipam
        ? {
            IPAM: {
              Driver: (p.ipamDriver as string | undefined) ?? "default",
              Config: ipam.map((c) => ({ Subnet: c.subnet, Gateway: c.gateway, IPRange: c.ipRange })),
            },
          }
        : {}),
    });
    const n = (await docker.getNetwork(net.id).inspect()) as { Scope: string };
    return { id: net.id, outs: { ...p, name, scope: n.Scope } };
  },

  async read(docker, id, state) {
    let n: {
      Name: string;
      Driver: string;
      Internal: boolean;
      Attachable: boolean;
      Options?: Record<string, string>;
      Labels?: Record<string, string>;
      Scope: string;
      IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] };
    };
    try {
      n = await docker.getNetwork(id).inspect();
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
    const observed: Props = {
      name: n.Name,
      driver: n.Driver,
      internal: n.Internal,
      attachable: n.Attachable,
      options: n.Options ?? {},
      labels: labelsList(n.Labels),
      scope: n.Scope,
      ipamConfigs: (n.IPAM?.Config ?? []).map((c) => ({
        subnet: c.Subnet,
        ...(c.Gateway ? { gateway: c.Gateway } : {}),
      })),
    };
    return overlay(state, observed);
  },

  async remove(docker, id) {
    await docker.getNetwork(id).remove();
  },
};
