/**
 * Conformance of the docker.Network and docker.Volume input tables with the provider's schema as the installed SDK
 * spells it (@pulumi/docker's `NetworkArgs`, `VolumeArgs`): every input has a verdict and every verdict names an
 * input; each judged input's hostile value is refused by its rule; each refused input fails closed when set and
 * passes when the engine does nothing with it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  DOCKER_NETWORK_VERDICTS,
  DOCKER_VOLUME_VERDICTS,
} from "../../../../policy/sources/pulumi/docker-objects";
import type { VerdictTable } from "../../../../policy/sources/verdict";
import { checkHostPathClaims } from "../../../../policy/stack/disallow-host-path-claims";
import { checkBridgeOptions } from "../../../../policy/stack/disallow-open-bridge";
import type { StackFinding } from "../../../../policy/stack/types";

/** The inputs of `<kind>Args` in the installed SDK's declarations. */
function args(file: string, kind: string): string[] {
  const d = readFileSync(
    join(__dirname, "..", "..", "..", "..", "node_modules", "@pulumi", "docker", file),
    "utf8",
  );
  const start = d.indexOf(`export interface ${kind}Args {`);
  expect(start).toBeGreaterThanOrEqual(0);
  const body = d.slice(start, d.indexOf("\n}", start));
  return [...body.matchAll(/^ {4}(?:readonly )?([A-Za-z0-9]+)\??:/gm)].map((m) => m[1] as string);
}

interface Table {
  readonly kind: string;
  readonly file: string;
  readonly type: string;
  readonly table: VerdictTable;
  readonly check: (props: Record<string, unknown>) => StackFinding[];
  /** Each refused input: a value the engine acts on, and one it does nothing with. */
  readonly refused: Readonly<Record<string, readonly [unknown, unknown]>>;
}

const resource = (type: string, props: Record<string, unknown>) => ({
  type,
  name: "r",
  urn: "urn:r",
  props,
});

const TABLES: readonly Table[] = [
  {
    kind: "Network",
    file: "network.d.ts",
    type: "docker:index/network:Network",
    table: DOCKER_NETWORK_VERDICTS,
    check: (p) => checkBridgeOptions([resource("docker:index/network:Network", p)]),
    refused: { attachable: [true, false], driver: ["macvlan", "bridge"], ingress: [true, false] },
  },
  {
    kind: "Volume",
    file: "volume.d.ts",
    type: "docker:index/volume:Volume",
    table: DOCKER_VOLUME_VERDICTS,
    check: (p) => checkHostPathClaims([resource("docker:index/volume:Volume", p)]),
    refused: { cluster: [{ scope: "multi" }, {}] },
  },
];

describe.each(TABLES)("the docker.$kind input table", (t) => {
  const inputs = args(t.file, t.kind);
  const entries = Object.entries(t.table);

  it("gives every input a verdict and names only its inputs", () => {
    expect(inputs.length).toBeGreaterThan(4);
    expect(inputs.filter((k) => !Object.hasOwn(t.table, k))).toEqual([]);
    expect(entries.map(([k]) => k).filter((k) => !inputs.includes(k))).toEqual([]);
  });

  it("passes a plain one", () => {
    expect(t.check({ name: "n" })).toEqual([]);
  });

  it.each(entries.filter(([, v]) => v.v === "judged"))("%s: its rule refuses the hostile value", (_, v) => {
    expect(t.check(v.v === "judged" ? (v.hostile as Record<string, unknown>) : {})).not.toEqual([]);
  });

  it("has a sample for every refused input, refused when set and passed when harmless", () => {
    expect(
      entries
        .filter(([, v]) => v.v === "refused")
        .map(([k]) => k)
        .sort(),
    ).toEqual(Object.keys(t.refused).sort());
    for (const [k, [set, harmless]] of Object.entries(t.refused)) {
      expect(
        t.check({ [k]: set }).map((f) => f.message),
        k,
      ).toEqual([expect.stringContaining(`: ${k}: `)]);
      expect(t.check({ [k]: harmless }), k).toEqual([]);
    }
  });
});
