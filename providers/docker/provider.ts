import type * as provider from "@pulumi/pulumi/provider";
import type Dockerode from "dockerode";
import {
  CONTAINER,
  createContainer,
  createNetwork,
  createVolume,
  deleteResource,
  diffInputs,
  NETWORK,
  type Props,
  readContainer,
  readNetwork,
  readVolume,
  unsupportedProperties,
  VOLUME,
} from "./resources";

/** The version this provider reports: the `@pulumi/docker` SDK version whose tokens and properties it speaks. */
export const PROVIDER_VERSION = "5.2.0";

const typeOf = (urn: string): string => {
  // urn:pulumi:stack::project::parent$type::name — the resource's own type is the last `$` segment.
  const qualified = urn.split("::")[2] ?? "";
  return qualified.split("$").pop() ?? "";
};

/**
 * A Pulumi resource provider for the `docker` package on the real Docker Engine API, for machines without the
 * official plugin. It serves `Network`, `Volume` and `Container` with `@pulumi/docker`'s tokens and property names;
 * a property it does not implement fails `check` by name.
 */
export function dockerProvider(docker: Dockerode): provider.Provider {
  return {
    version: PROVIDER_VERSION,

    async check(urn, _olds, news) {
      const failures = unsupportedProperties(typeOf(urn), news as Props);
      if (typeOf(urn) === CONTAINER && typeof (news as Props).image !== "string") {
        failures.push({
          property: "image",
          reason: "image is required: the image to run, present on the engine",
        });
      }
      return { inputs: news, failures };
    },

    async diff(_id, urn, olds, news) {
      const { changed, replaces } = diffInputs(typeOf(urn), olds as Props, news as Props);
      return {
        changes: changed.length > 0,
        replaces,
        // Named objects cannot exist twice on one engine: the old one must go first.
        deleteBeforeReplace: replaces.length > 0 && (news as Props).name !== undefined,
      };
    },

    async create(urn, inputs) {
      const type = typeOf(urn);
      if (type === NETWORK) return createNetwork(docker, urn, inputs as Props);
      if (type === VOLUME) return createVolume(docker, urn, inputs as Props);
      if (type === CONTAINER) return createContainer(docker, urn, inputs as Props);
      throw new Error(`resource type ${type} is not served by this provider`);
    },

    async read(id, urn, props) {
      const type = typeOf(urn);
      const state = (props ?? {}) as Props;
      const read =
        type === NETWORK
          ? await readNetwork(docker, id, state)
          : type === VOLUME
            ? await readVolume(docker, id, state)
            : type === CONTAINER
              ? await readContainer(docker, id, state)
              : undefined;
      // No id tells the engine the object is gone.
      return read === undefined ? {} : { id, props: read };
    },

    async delete(id, urn) {
      await deleteResource(docker, typeOf(urn), id);
    },
  };
}
