/**
 * Kubernetes YAML as kubectl and the API server read it (sigs.k8s.io/yaml: YAML -> JSON), so that the rules see the
 * value the engine would store.
 */
import type { Document } from "yaml";

/** A parsed YAML document as the JSON the API server would receive. Throws where the engine's decoder would. */
export function kubeYamlToJson(doc: Document): unknown {
  return doc.toJS({ maxAliasCount: 1000 });
}
