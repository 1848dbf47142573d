/**
 * Conformance of the Engine API verdict table with the generated schema (policy/sources/docker): every field of the
 * container create body at the claimed API version has a verdict; every verdict names a field the API has and rules
 * that exist; a judged field's hostile value is refused by one of its rules (and its control passes them); a
 * refused field fails closed when set and passes when left at Go's zero value.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { fromValue } from "../../../../policy/sources/docker/json-node";
import {
  DOCKER_NETWORK,
  DOCKER_VOLUME,
  networkBodyProps,
  volumeBodyProps,
} from "../../../../policy/sources/docker/objects";
import { adaptLaunchSpec } from "../../../../policy/sources/docker/read";
import {
  CONTAINER_CREATE,
  NETWORK_CREATE,
  VOLUME_CREATE,
} from "../../../../policy/sources/docker/schema.generated";
import { fieldPaths, type Shape } from "../../../../policy/sources/docker/shape";
import { CONTAINER_CREATE_VERDICTS } from "../../../../policy/sources/docker/verdicts";
import {
  NETWORK_CREATE_VERDICTS,
  VOLUME_CREATE_VERDICTS,
} from "../../../../policy/sources/docker/verdicts-objects";
import { verdictFor } from "../../../../policy/sources/verdict";
import { checkHostPathClaims } from "../../../../policy/stack/disallow-host-path-claims";
import { checkBridgeOptions } from "../../../../policy/stack/disallow-open-bridge";
import { ALL_STACK_RULES } from "../../../../policy/stack/registry";

const UNJUDGED = "sandbox-disallow-unjudged-fields";

/** A hardened body that every rule passes. */
const BASE = {
  Image: "sandbox-busybox:1",
  User: "1000:1000",
  Env: ["LANG=C.UTF-8"],
  HostConfig: {
    CapDrop: ["ALL"],
    SecurityOpt: ["no-new-privileges:true"],
    ReadonlyRootfs: true,
    NetworkMode: "none",
    Memory: 134217728,
    MemorySwap: 134217728,
    NanoCpus: 500000000,
    PidsLimit: 128,
    RestartPolicy: { Name: "no" },
  },
};

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `b` laid over `a`: objects merged key by key, anything else replaced. */
function over(a: unknown, b: unknown): unknown {
  if (!isObj(a) || !isObj(b)) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = over(a[k], v);
  return out;
}

function failing(body: unknown, config: Readonly<Record<string, object>> = {}): string[] {
  return judge(adaptLaunchSpec(body, "conformance"), ALL_RULES, config)
    .filter((r) => r.findings.some((f) => !f.unchecked))
    .map((r) => r.rule.id);
}

/** The shape at a schema path (`HostConfig.Mounts[].Type`). */
function shapeAt(root: Shape, path: string): Shape {
  let s = root;
  for (const part of path.split(/(?=\[\]|\{\}|\.)/)) {
    while (s.k === "ptr") s = s.to;
    if (part === "[]" || part === "{}") {
      if (s.k !== "slice" && s.k !== "array" && s.k !== "map") throw new Error(`no element at ${path}`);
      s = s.of;
    } else {
      const name = part.replace(/^\./, "");
      if (s.k !== "struct" || s.fields[name] === undefined) throw new Error(`no field ${name} at ${path}`);
      s = s.fields[name] as Shape;
    }
  }
  return s;
}

/** A value of shape `s` that is not Go's zero value. */
function nonZero(s: Shape): unknown {
  switch (s.k) {
    case "ptr":
      return nonZero(s.to);
    case "string":
    case "text":
    case "bytes":
    case "any":
      return "x-set";
    case "bool":
      return true;
    case "int":
      return s.unsigned ? 1 : -1;
    case "float":
      return 1;
    case "strslice":
      return ["x-set"];
    case "slice":
    case "array":
      return [nonZero(s.of)];
    case "map":
      return { "x-key": nonZero(s.of) };
    case "struct": {
      const [k, f] = Object.entries(s.fields)[0] ?? [];
      return k === undefined || f === undefined ? {} : { [k]: nonZero(f) };
    }
  }
}

/** A body that sets the field at a schema path to `value`, through one list element or map entry per level. */
function setting(path: string, value: unknown): unknown {
  const parts = path.split(/(?=\[\]|\{\}|\.)/).map((p) => p.replace(/^\./, ""));
  let v = value;
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i] as string;
    v = p === "[]" ? [v] : p === "{}" ? { "x-key": v } : { [p]: v };
  }
  return v;
}

const paths = fieldPaths(CONTAINER_CREATE);
const entries = Object.entries(CONTAINER_CREATE_VERDICTS);

describe("the Engine API verdict table", () => {
  it("the base body passes every rule", () => {
    expect(failing(BASE)).toEqual([]);
  });

  it("gives every field of the claimed schema a verdict", () => {
    expect(paths.length).toBeGreaterThan(150);
    expect(paths.filter((p) => verdictFor(CONTAINER_CREATE_VERDICTS, p) === undefined)).toEqual([]);
  });

  it("names only fields the schema has, and rules that exist", () => {
    expect(entries.map(([p]) => p).filter((p) => !paths.includes(p))).toEqual([]);
    const ids = new Set(ALL_RULES.map((r) => r.id));
    const missing = entries.flatMap(([p, v]) =>
      v.v === "judged" ? v.rules.filter((r) => !ids.has(r)).map((r) => `${p}: ${r}`) : [],
    );
    expect(missing).toEqual([]);
  });

  it.each(entries.filter(([, v]) => v.v === "judged"))(
    "%s: a rule it names refuses its hostile value",
    (p, v) => {
      if (v.v !== "judged") return;
      const hit = failing(over(BASE, v.hostile), v.config).filter((r) => v.rules.includes(r));
      expect(hit, `${p} hostile ${JSON.stringify(v.hostile)}`).not.toEqual([]);
      if (v.control !== undefined) {
        const control = failing(over(BASE, v.control), v.config).filter((r) => v.rules.includes(r));
        expect(control, `${p} control ${JSON.stringify(v.control)}`).toEqual([]);
      }
    },
  );

  it.each(entries.filter(([, v]) => v.v === "refused"))(
    "%s: refused when set, passed at Go's zero value",
    (p, v) => {
      if (v.v !== "refused") return;
      const shape = shapeAt(CONTAINER_CREATE, p);
      const set = over(BASE, setting(p, nonZero(shape)));
      const allowedSample = v.allows?.(nonZero(shape)) === true;
      if (!allowedSample) expect(failing(set), JSON.stringify(set)).toContain(UNJUDGED);
      const zero = shape.k === "bool" ? false : shape.k === "int" ? 0 : shape.k === "string" ? "" : undefined;
      if (zero !== undefined) expect(failing(over(BASE, setting(p, zero)))).not.toContain(UNJUDGED);
    },
  );
});

describe("the Engine API network body verdict table", () => {
  const netPaths = fieldPaths(NETWORK_CREATE);
  const netEntries = Object.entries(NETWORK_CREATE_VERDICTS);

  it("gives every field of the network create body a verdict, names only its fields and rules that exist", () => {
    expect(netPaths.length).toBeGreaterThan(15);
    expect(netPaths.filter((p) => verdictFor(NETWORK_CREATE_VERDICTS, p) === undefined)).toEqual([]);
    expect(netEntries.map(([p]) => p).filter((p) => !netPaths.includes(p))).toEqual([]);
    const ids = new Set([...ALL_RULES, ...ALL_STACK_RULES].map((r) => r.id));
    expect(
      netEntries.flatMap(([, v]) => (v.v === "judged" ? v.rules.filter((r) => !ids.has(r)) : [])),
    ).toEqual([]);
  });

  it.each(netEntries.filter(([, v]) => v.v === "refused"))(
    "%s: refused when set, named where it is written",
    (p, v) => {
      if (v.v !== "refused") return;
      const props = networkBodyProps(fromValue({ Name: "n", [p]: nonZero(shapeAt(NETWORK_CREATE, p)) }));
      const fields = (props.unjudgedFields ?? []) as { path: string }[];
      expect(fields.map((f) => f.path)).toEqual([p]);
    },
  );

  it.each(netEntries.filter(([, v]) => v.v === "judged"))(
    "%s: its rule refuses the hostile value",
    (p, v) => {
      if (v.v !== "judged") return;
      const props = networkBodyProps(fromValue({ Name: "n", ...(v.hostile as object) }));
      expect(checkBridgeOptions([{ type: DOCKER_NETWORK, name: "n", urn: "n", props }]), p).not.toEqual([]);
    },
  );
});

describe("the Engine API volume body verdict table", () => {
  // The top-level fields: ClusterVolumeSpec is refused whole, so its inner fields need no verdict of their own.
  const paths = fieldPaths(VOLUME_CREATE).filter((p) => !p.includes("."));
  const rows = Object.entries(VOLUME_CREATE_VERDICTS);
  const judgeVolume = (body: object) =>
    checkHostPathClaims([
      { type: DOCKER_VOLUME, name: "v", urn: "v", props: volumeBodyProps(fromValue(body)) },
    ]);

  it("gives every field of the volume create body a verdict, names only its fields and rules that exist", () => {
    expect(paths).toEqual(
      expect.arrayContaining(["Name", "Driver", "DriverOpts", "Labels", "ClusterVolumeSpec"]),
    );
    expect(paths.filter((p) => verdictFor(VOLUME_CREATE_VERDICTS, p) === undefined)).toEqual([]);
    expect(rows.map(([p]) => p).filter((p) => !paths.includes(p))).toEqual([]);
    const ids = new Set([...ALL_RULES, ...ALL_STACK_RULES].map((r) => r.id));
    expect(rows.flatMap(([, v]) => (v.v === "judged" ? v.rules.filter((r) => !ids.has(r)) : []))).toEqual([]);
  });

  it.each(rows.filter(([, v]) => v.v === "judged"))("%s: its rule refuses the hostile value", (p, v) => {
    if (v.v !== "judged") return;
    expect(judgeVolume({ Name: "v", ...(v.hostile as object) }), p).not.toEqual([]);
  });

  it("refuses a refused field and one outside the claimed API, and passes a plain local volume", () => {
    expect(judgeVolume({ Name: "v", ClusterVolumeSpec: { Group: "g" } }).map((f) => f.message)).toEqual([
      expect.stringMatching(/ClusterVolumeSpec: a Swarm cluster volume/),
    ]);
    expect(judgeVolume({ Name: "v", Mountpoint: "/etc" }).map((f) => f.message)).toEqual([
      expect.stringMatching(/Mountpoint: it is not a field of Engine API/),
    ]);
    expect(judgeVolume({ Name: "v", Driver: "local", Labels: { a: "b" } })).toEqual([]);
  });
});
