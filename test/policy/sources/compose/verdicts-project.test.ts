/**
 * Conformance of the Compose project verdict tables with the generated Compose schema: every top-level key and every
 * key of a network, volume, secret, config, include and model definition has a verdict; every verdict names a key the
 * schema has and rules that exist; a judged key's hostile fragment is refused by one of its rules through `scan`; a
 * refused key fails closed on the service that uses the definition, and not on one that does not.
 */
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ALL_RULES } from "../../../../policy/rules/registry";
import { COMPOSE_DEFS, COMPOSE_TOP } from "../../../../policy/sources/compose/schema.generated";
import {
  COMPOSE_DEFINITION_VERDICTS,
  COMPOSE_TOP_VERDICTS,
} from "../../../../policy/sources/compose/verdicts-project";
import { type VerdictTable, verdictFor } from "../../../../policy/sources/verdict";
import { ALL_STACK_RULES } from "../../../../policy/stack/registry";
import { blocking, scanFiles } from "../../../adversarial/harness";

const BASE = {
  image: "busybox:1.36",
  user: "1000:1000",
  read_only: true,
  cap_drop: ["ALL"],
  security_opt: ["no-new-privileges:true"],
  network_mode: "none",
  mem_limit: "128m",
  cpus: 0.5,
  pids_limit: 64,
  restart: "no",
};
const UNJUDGED = "sandbox-disallow-unjudged-fields";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const plain = (o: Obj) =>
  Object.fromEntries(Object.entries(o).filter(([, x]) => x !== null && x !== undefined));

async function rulesOf(fragment: { top?: Obj; service?: Obj }): Promise<string[]> {
  const file = {
    services: { app: plain({ ...BASE, ...(fragment.service ?? {}) }) },
    ...(fragment.top ?? {}),
  };
  const r = await scanFiles({ "compose.yaml": stringify(file), "token.txt": "x\n" });
  expect(r.code, JSON.stringify(r.report.errors)).not.toBe(2);
  return r.report.findings
    .filter((f) => !f.unchecked && (blocking(f) || f.level === "advisory"))
    .map((f) => f.ruleId);
}

const TABLES: [string, VerdictTable, readonly string[]][] = [
  ["top", COMPOSE_TOP_VERDICTS, COMPOSE_TOP],
  ...Object.entries(COMPOSE_DEFINITION_VERDICTS).map(
    ([d, t]) => [d, t, COMPOSE_DEFS[d] ?? []] as [string, VerdictTable, readonly string[]],
  ),
];
const judgedRows = TABLES.flatMap(([d, t]) =>
  Object.entries(t)
    .filter(([, v]) => v.v === "judged")
    .map(([k, v]) => [`${d}.${k}`, v] as const),
);
const RULE_IDS = new Set([...ALL_RULES.map((r) => r.id), ...ALL_STACK_RULES.map((r) => r.id)]);

describe("the Compose project verdict tables", () => {
  it("give every top-level key and every key of each definition a verdict", () => {
    for (const [d, table, keys] of TABLES) {
      expect(keys.length, d).toBeGreaterThan(0);
      expect(
        keys.filter((k) => verdictFor(table, k) === undefined),
        d,
      ).toEqual([]);
    }
  });

  it("name only keys the schema has, and rules that exist", () => {
    for (const [d, table, keys] of TABLES) {
      expect(
        Object.keys(table).filter((k) => !keys.includes(k)),
        d,
      ).toEqual([]);
      expect(
        Object.entries(table).flatMap(([k, v]) =>
          v.v === "judged" ? v.rules.filter((r) => !RULE_IDS.has(r)).map((r) => `${k}: ${r}`) : [],
        ),
        d,
      ).toEqual([]);
    }
  });

  it.each(judgedRows)("%s: a rule it names refuses its hostile fragment", async (p, v) => {
    if (v.v !== "judged" || !isObj(v.hostile)) throw new Error(`${p}: a judged verdict needs a fragment`);
    const hit = (await rulesOf(v.hostile as { top?: Obj; service?: Obj })).filter((r) => v.rules.includes(r));
    expect(hit, `${p} hostile ${JSON.stringify(v.hostile)}`).not.toEqual([]);
  });

  /** A definition that sets each refused key, and one the key allows. */
  const REFUSED: Readonly<
    Record<string, { set: { top: Obj; service: Obj }; allowed: { top: Obj; service: Obj } }>
  > = {
    "network.driver": {
      set: {
        top: { networks: { n: { driver: "macvlan" } } },
        service: { network_mode: null, networks: ["n"] },
      },
      allowed: {
        top: { networks: { n: { driver: "bridge", internal: true } } },
        service: { network_mode: null, networks: ["n"] },
      },
    },
    "network.ipam.driver": {
      set: {
        top: { networks: { n: { internal: true, ipam: { driver: "infoblox" } } } },
        service: { network_mode: null, networks: ["n"] },
      },
      allowed: {
        top: { networks: { n: { internal: true, ipam: { driver: "default" } } } },
        service: { network_mode: null, networks: ["n"] },
      },
    },
  };

  it.each(
    TABLES.flatMap(([d, t]) =>
      Object.entries(t)
        .filter(([, v]) => v.v === "refused")
        .map(([k]) => `${d}.${k}`),
    ),
  )("%s: refused on the service that uses it, passed where it allows the value", async (p) => {
    const sample = REFUSED[p];
    expect(sample, `a sample for ${p}`).toBeDefined();
    if (sample === undefined) return;
    expect(await rulesOf(sample.set)).toContain(UNJUDGED);
    expect(await rulesOf(sample.allowed)).not.toContain(UNJUDGED);
    // A definition no service uses is never created by docker compose up.
    expect(await rulesOf({ top: sample.set.top })).not.toContain(UNJUDGED);
  });

  it("refuses a key the claimed schema does not have in a used definition, and passes an x- extension", async () => {
    const use = { network_mode: null, networks: ["n"] };
    expect(
      await rulesOf({ top: { networks: { n: { internal: true, mtu: 1500 } } }, service: use }),
    ).toContain(UNJUDGED);
    expect(
      await rulesOf({ top: { networks: { n: { internal: true, "x-note": 1 } } }, service: use }),
    ).not.toContain(UNJUDGED);
  });
});
