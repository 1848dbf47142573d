// The scanner's reading of one YAML document next to the engine's (sigs.k8s.io/yaml YAMLToJSON, via the kube-yaml
// oracle), both as {json} or {error}.
import { parseAllDocuments } from "yaml";
import { kubeYamlToJson } from "../../cli/scan/yaml-kube";
import { runOracle } from "../helpers/goOracle";

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

/** The engine, for many documents at once (one oracle process). */
export function engine(texts: readonly string[]): Reading[] {
  const answers = JSON.parse(runOracle("kube-yaml", JSON.stringify(texts))) as {
    json?: unknown;
    error?: string;
  }[];
  return answers.map((a) => (a.error !== undefined ? { error: a.error } : { json: a.json ?? null }));
}

/** A reading with only its kind of outcome kept where errors are compared: any error equals any error. */
export function outcome(r: Reading): unknown {
  return "error" in r ? "error" : r.json;
}
