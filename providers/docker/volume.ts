/** `docker:index/volume:Volume`: a named volume on the engine. */
import { isNotFound } from "../../runtime/docker/client";
import { engineLabels, labelsList, objectName, overlay, type ResourceKind } from "./kind";

export const VOLUME = "docker:index/volume:Volume";

export const volume: ResourceKind = {
  type: VOLUME,
  inputs: ["name", "driver", "driverOpts", "labels"],
  outputs: ["mountpoint"],
  inPlace: [],

  async create(docker, urn, p) {
    const volume = await docker.createVolume({
      Name: objectName(p, urn),
      Driver: (p.driver as string | undefined) ?? "local",
      DriverOpts: (p.driverOpts as Record<string, string> | undefined) ?? {},
      Labels: engineLabels(p.labels, urn),
    });
    const info = (await volume.inspect()) as unknown as { Name: string; Mountpoint: string };
    return { id: info.Name, outs: { ...p, name: info.Name, mountpoint: info.Mountpoint } };
  },

  async read(docker, id, state) {
    try {
      const v = (await docker.getVolume(id).inspect()) as unknown as {
        Name: string;
        Driver: string;
        Options?: Record<string, string> | null;
        Labels?: Record<string, string> | null;
        Mountpoint: string;
      };
      return overlay(state, {
        name: v.Name,
        driver: v.Driver,
        driverOpts: v.Options ?? {},
        labels: labelsList(v.Labels ?? {}),
        mountpoint: v.Mountpoint,
      });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  },

  async remove(docker, id) {
    await docker.getVolume(id).remove({ force: true });
  },
};
