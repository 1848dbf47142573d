// What `kubectl apply -f` would send for a whole YAML or JSON stream (the kube-stream oracle: cli-runtime's resource
// builder, locally), next to what the scanner judges for the same text (parseInput's Kubernetes resources).
import { parseInput } from "../../../../policy/sources/text/documents";
import { runOracle } from "../../../helpers/goOracle";

export interface Sent {
  readonly type: string;
  readonly props: unknown;
}

export interface StreamReading {
  readonly objects: readonly Sent[];
  readonly errors: readonly string[];
}

/** The type token the scanner gives a group, version and kind (no version: the group's preferred, written v1). */
function token(group: string, version: string, kind: string): string {
  return `kubernetes:${group === "" ? "core" : group}/${version === "" ? "v1" : version}:${kind}`;
}

/** kubectl's reading of each stream (one oracle process). */
export function kubectlReads(texts: readonly string[]): StreamReading[] {
  const answers = JSON.parse(runOracle("kube-stream", JSON.stringify(texts))) as {
    objects: { group: string; version: string; kind: string; object: unknown }[];
    errors: string[];
  }[];
  return answers.map((a) => ({
    objects: a.objects.map((o) => ({ type: token(o.group, o.version, o.kind), props: o.object })),
    errors: a.errors,
  }));
}

/** The scanner's reading of one stream: its Kubernetes resources and its input errors. */
export function scannerReads(text: string, file = "s.yaml"): StreamReading {
  const parsed = parseInput(file, text);
  return {
    objects: parsed.items
      .filter((i) => i.resource.format === "kubernetes")
      .map((i) => ({ type: i.type, props: JSON.parse(JSON.stringify(i.props)) as unknown })),
    errors: parsed.errors.map((e) => `${e.location.line ?? ""}: ${e.message}`),
  };
}
