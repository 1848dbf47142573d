// The scanner's reading of one YAML document, as {json} or {error}: what the engine's reading (kube-yaml-oracle.ts)
// and the plain block reader are compared with.
import { parseAllDocuments } from "yaml";
import { kubeYamlToJson } from "../../../../policy/sources/kubernetes/yaml";

export type Reading = { readonly json: unknown } | { readonly error: string };

/** The scanner: parsed as parseInput parses (duplicates and merge keys kept), then decoded for Kubernetes. */
export function ours(text: string): Reading {
  const docs = parseAllDocuments(text, { uniqueKeys: false, merge: false, prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [];
  if (list.length > 1) return { error: "more than one document" };
  const doc = list[0];
  if (doc === undefined) return { json: null };
  if (doc.errors.length > 0) return { error: `not valid YAML: ${doc.errors[0]?.message ?? ""}` };
  try {
    return { json: kubeYamlToJson(doc, text) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}
