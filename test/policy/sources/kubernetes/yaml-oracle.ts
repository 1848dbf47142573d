// The scanner's reading of one YAML document next to the engine's (sigs.k8s.io/yaml YAMLToJSON, via the kube-yaml
// oracle), both as {json} or {error}.
import { runOracle } from "../../../helpers/goOracle";
import type { Reading } from "./yaml-reading";

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
