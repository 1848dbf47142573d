// Generated Kubernetes streams, read by the scanner and by kubectl's own resource builder (the kube-stream oracle):
// separators in every form YAMLReader knows (`---`, `---#x`, `--- # c`, `---` with Go white space, and the invalid
// `--- x` / `----`), `...` with or without a `---` after it, LF, CRLF and lone-CR line ends in any mix, comments
// before a line end, a leading byte-order mark, Lists by kind and by an `items` key, items that inherit the List's
// kind and apiVersion, and apiVersions as ParseGroupVersion reads them (`/v1`, `apps/`, `""`). Every object kubectl
// would send is judged by the scanner as the same type with the same props; where kubectl reads the stream without
// an error, the scanner judges exactly those objects; where kubectl refuses something, so does the scanner.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { kubectlReads, type StreamReading, scannerReads } from "./yaml-stream-oracle";

type Obj = Record<string, unknown>;

const container = (privileged: boolean) => ({
  name: "app",
  image: "registry.example/app:1",
  securityContext: { privileged, allowPrivilegeEscalation: privileged },
});
const podSpec = (privileged: boolean) => ({ containers: [container(privileged)] });

const apiVersionCore = fc.constantFrom("v1", "/v1", "", "/");
const apiVersionApps = fc.constantFrom("apps/v1", "apps/");

/** A pod-running object, a Service, or a List of them in each way kubectl reads a List. */
const leaf = fc.oneof(
  fc
    .tuple(apiVersionCore, fc.boolean(), fc.nat(99))
    .map(([v, p, n]): Obj => ({ apiVersion: v, kind: "Pod", metadata: { name: `p${n}` }, spec: podSpec(p) })),
  fc.tuple(apiVersionApps, fc.boolean(), fc.nat(99)).map(
    ([v, p, n]): Obj => ({
      apiVersion: v,
      kind: "Deployment",
      metadata: { name: `d${n}` },
      spec: {
        selector: { matchLabels: { app: "a" } },
        template: { metadata: { labels: { app: "a" } }, spec: podSpec(p) },
      },
    }),
  ),
  fc.tuple(apiVersionCore, fc.nat(99)).map(
    ([v, n]): Obj => ({
      apiVersion: v,
      kind: "Service",
      metadata: { name: `s${n}` },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
    }),
  ),
);

/** A List item: typed, or kind-less (it takes the List's kind and apiVersion). */
const item = fc.tuple(leaf, fc.boolean()).map(([o, bare]): Obj => {
  if (!bare || o.kind !== "Pod") return o;
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
});

const doc = fc.oneof(
  { weight: 3, arbitrary: leaf },
  fc
    .tuple(
      fc.constantFrom("v1", "apps/v1"),
      fc.constantFrom("List", "PodList"),
      fc.array(item, { maxLength: 3 }),
    )
    .map(([apiVersion, kind, items]): Obj => ({ apiVersion, kind, items })),
  // Any object with `items` is a List to kubectl: a safe Pod carrying items sends the items only.
  fc.tuple(leaf, fc.array(item, { maxLength: 2 })).map(([o, items]): Obj => ({ ...o, items })),
);

const separator = fc.constantFrom(
  "---",
  "---",
  "--- ",
  "---#x: y",
  "--- # c",
  "---\t# c",
  "---\u00a0",
  "---\u3000#",
  "--- x",
  "----",
  "...\n---",
  "...",
  "... # end",
  // A lone CR is no line end to YAMLReader: the whole line is the separator, and go-yaml never sees what follows it.
  "--- # c\rmetadata: {name: hidden}",
  // ...but it is one to go-yaml: this `---` ends the document inside the piece, and the rest of the piece is unread.
  "# c\r---\rmetadata: {name: hidden}\n---",
);
const lineEnd = fc.constantFrom("\n", "\n", "\r\n", "\r");
const comment = fc.constantFrom("", "", "", " # c", " #", "   # a: 1");

/** A block-YAML document with every line end and comment chosen independently. */
function spellDoc(o: Obj, ends: readonly string[], comments: readonly string[]): string {
  const lines = stringify(o).trimEnd().split("\n");
  return lines
    .map((l, i) => {
      const c = comments[i % comments.length] ?? "";
      // A comment only where YAML allows one: after a value, not inside a block scalar (the emitter writes none).
      return `${l}${/:\s*$|^\s*-\s*$/.test(l) ? "" : c}${ends[i % ends.length] ?? "\n"}`;
    })
    .join("");
}

const stream = fc
  .record({
    docs: fc.array(fc.tuple(doc, separator), { minLength: 1, maxLength: 4 }),
    ends: fc.array(lineEnd, { minLength: 1, maxLength: 7 }),
    comments: fc.array(comment, { minLength: 1, maxLength: 5 }),
    lead: fc.constantFrom(
      "",
      "",
      "---\n",
      "\ufeff",
      "\ufeff---\n",
      "\ufeff--- # c\r",
      "\ufeff---#x\n",
      "# head\n",
    ),
  })
  .map(
    ({ docs, ends, comments, lead }) =>
      lead + docs.map(([d, sep], i) => `${i === 0 ? "" : `${sep}\n`}${spellDoc(d, ends, comments)}`).join(""),
  );

/** Every object kubectl sends is one the scanner judges, the same; without kubectl errors, exactly those. */
function agree(text: string, engine: StreamReading): void {
  const mine = canonicalReading(scannerReads(text));
  const seen = { text, engine, mine };
  if (engine.errors.length === 0) {
    expect(mine.objects, JSON.stringify(seen)).toEqual(engine.objects);
    expect(mine.errors, JSON.stringify(seen)).toEqual([]);
    return;
  }
  expect(mine.errors.length, JSON.stringify(seen)).toBeGreaterThan(0);
  const left = [...mine.objects];
  for (const sent of engine.objects) {
    const i = left.findIndex((o) => JSON.stringify(o) === JSON.stringify(sent));
    expect(
      i,
      `kubectl sends ${JSON.stringify(sent)} but scan does not judge it: ${JSON.stringify(seen)}`,
    ).not.toBe(-1);
    left.splice(i, 1);
  }
}

/** Sorted keys, so that objects compare by content whatever order each side wrote them in. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v as Obj)
      .sort()
      .map((k) => [k, canonical((v as Obj)[k])]),
  );
}

function canonicalReading(r: StreamReading): StreamReading {
  return { objects: r.objects.map((o) => ({ type: o.type, props: canonical(o.props) })), errors: r.errors };
}

describe("a Kubernetes stream is cut and read as kubectl reads it", () => {
  it("generated streams: the objects kubectl would send are the objects scan judges", () => {
    const texts = fc.sample(stream, { seed: 7301, numRuns: 600 });
    const answers = kubectlReads(texts);
    texts.forEach((text, i) => {
      const engine = answers[i] as StreamReading;
      agree(text, canonicalReading(engine));
    });
  });
});
