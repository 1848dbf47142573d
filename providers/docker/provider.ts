import type * as provider from "@pulumi/pulumi/provider";
import type Dockerode from "dockerode";
import type { Props } from "./kind";
import { checkInputs, deleteResource, diffInputs, kindOf, updatedOutputs } from "./resources";
import { rewrapSecrets, secretKeys, unwrapSecrets } from "./secrets";

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
      return { inputs: news, failures: checkInputs(typeOf(urn), unwrapSecrets(news as Props)) };
    },

    async diff(_id, urn, olds, news) {
      const { changed, replaces } = diffInputs(
        typeOf(urn),
        unwrapSecrets(olds as Props),
        unwrapSecrets(news as Props),
      );
      return {
        changes: changed.length > 0,
        replaces,
        // Named objects cannot exist twice on one engine: the old one must go first.
        deleteBeforeReplace: replaces.length > 0 && (news as Props).name !== undefined,
      };
    },

    async create(urn, inputs) {
      const type = typeOf(urn);
      const kind = kindOf(type);
      if (kind === undefined) throw new Error(`resource type ${type} is not served by this provider`);
      // The engine gets plain values; the state gets back as secrets the outputs whose inputs were.
      const made = await kind.create(docker, urn, unwrapSecrets(inputs as Props));
      return { id: made.id, outs: rewrapSecrets(made.outs, secretKeys(inputs as Props)) };
    },

    // Without an update the SDK's server would answer with no outputs at all, and the state would lose them.
    async update(_id, urn, olds, news) {
      const outs = updatedOutputs(typeOf(urn), unwrapSecrets(olds as Props), unwrapSecrets(news as Props));
      return { outs: rewrapSecrets(outs, [...secretKeys(olds as Props), ...secretKeys(news as Props)]) };
    },

    async read(id, urn, props) {
      const state = (props ?? {}) as Props;
      const read = await kindOf(typeOf(urn))?.read(docker, id, unwrapSecrets(state));
      // No id tells the engine the object is gone.
      return read === undefined ? {} : { id, props: rewrapSecrets(read, secretKeys(state)) };
    },

    async delete(id, urn) {
      await deleteResource(docker, typeOf(urn), id);
    },
  };
}
