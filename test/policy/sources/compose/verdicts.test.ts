/**
 * Conformance of the Compose verdict table with the generated Compose schema (policy/sources/compose): every key of
 * a service, job and pre_start hook has a verdict; every verdict names a key the schema has and rules that exist; a
 * judged key's hostile value is refused by one of its rules through `scan`; a refused key fails closed when set.
 */
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ALL_RULES } from "../../../../policy/rules/registry";
import { COMPOSE_DEFS } from "../../../../policy/sources/compose/schema.generated";
import { COMPOSE_SERVICE_VERDICTS } from "../../../../policy/sources/compose/verdicts";
import { verdictFor } from "../../../../policy/sources/verdict";
import { blocking, scanFiles } from "../../../adversarial/harness";

/** A hardened service that every rule passes. */
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

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

async function failing(
  service: Record<string, unknown>,
  top: Record<string, unknown> = {},
  config?: Readonly<Record<string, object>>,
): Promise<string[]> {
  const files: Record<string, string> = {
    "compose.yaml": stringify({ services: { app: service }, ...top }),
  };
  const args: string[] = [];
  if (config !== undefined) {
    files["pack.json"] = JSON.stringify(config);
    args.push("--config", "pack.json");
  }
  const r = await scanFiles(files, args);
  return r.report.findings
    .filter((f) => !f.unchecked && (blocking(f) || f.level === "advisory"))
    .map((f) => f.ruleId);
}

const keys = (d: string) => (COMPOSE_DEFS[d] ?? []).filter((p) => !p.includes(".") && !p.includes("[]"));
const entries = Object.entries(COMPOSE_SERVICE_VERDICTS);

/** What a judged key's hostile value needs from the rest of the file. */
const TOP: Readonly<Record<string, Record<string, unknown>>> = {
  configs: { configs: { hostkeys: { file: "/etc/ssh/ssh_host_rsa_key" } } },
  networks: { networks: { hostnet: { name: "host", external: true } } },
  secrets: { secrets: { token: { file: "./token.txt" } } },
};

describe("the Compose verdict table", () => {
  it("the base service passes every rule", async () => {
    expect(await failing(BASE)).toEqual([]);
  });

  it("gives every key of a service, a job and a pre_start hook a verdict", () => {
    const all = [...new Set([...keys("service"), ...keys("job"), ...keys("pre_start_hook")])];
    expect(all.length).toBeGreaterThan(90);
    expect(all.filter((k) => verdictFor(COMPOSE_SERVICE_VERDICTS, k) === undefined)).toEqual([]);
  });

  it("names only keys the schema has, and rules that exist", () => {
    const known = new Set([
      ...(COMPOSE_DEFS.service ?? []),
      ...(COMPOSE_DEFS.job ?? []),
      ...(COMPOSE_DEFS.pre_start_hook ?? []),
    ]);
    expect(entries.map(([p]) => p).filter((p) => !known.has(p))).toEqual([]);
    const ids = new Set(ALL_RULES.map((r) => r.id));
    expect(
      entries.flatMap(([p, v]) =>
        v.v === "judged" ? v.rules.filter((r) => !ids.has(r)).map((r) => `${p}: ${r}`) : [],
      ),
    ).toEqual([]);
  });

  it.each(entries.filter(([, v]) => v.v === "judged"))(
    "%s: a rule it names refuses its hostile value",
    async (p, v) => {
      if (v.v !== "judged" || !isObj(v.hostile)) return;
      const service = Object.fromEntries(
        Object.entries({ ...BASE, ...v.hostile }).filter(([, x]) => x !== null),
      );
      const hit = (await failing(service, TOP[p], v.config)).filter((r) => v.rules.includes(r));
      expect(hit, `${p} hostile ${JSON.stringify(v.hostile)}`).not.toEqual([]);
      if (isObj(v.control)) {
        const control = (await failing({ ...BASE, ...v.control }, TOP[p], v.config)).filter((r) =>
          v.rules.includes(r),
        );
        expect(control, `${p} control`).toEqual([]);
      }
    },
  );

  /** A value that sets each refused key (and what the file needs besides), and one the key allows where it has one. */
  const SAMPLES: Readonly<
    Record<string, { set: Record<string, unknown>; allowed?: Record<string, unknown> }>
  > = {
    annotations: { set: { annotations: { "run.oci.keep_original_groups": "1" } } },
    cgroup_parent: { set: { cgroup_parent: "/" } },
    cpu_rt_period: { set: { cpu_rt_period: 1000000 } },
    cpu_rt_runtime: { set: { cpu_rt_runtime: 950000 } },
    external_links: { set: { external_links: ["sandbox-broker:broker"] } },
    label_file: { set: { label_file: ["./labels"] } },
    links: { set: { links: ["db"] } },
    logging: {
      set: { logging: { driver: "syslog", options: { "syslog-address": "udp://203.0.113.9:514" } } },
      allowed: { logging: { driver: "json-file", options: { "max-size": "10m" } } },
    },
    mac_address: { set: { mac_address: "02:42:ac:11:00:02" } },
    models: { set: { models: ["llm"] } },
    oom_kill_disable: { set: { oom_kill_disable: true }, allowed: { oom_kill_disable: false } },
    oom_score_adj: { set: { oom_score_adj: -900 }, allowed: { oom_score_adj: 300 } },
    provider: { set: { provider: { type: "awesomecloud" } } },
    ulimits: { set: { ulimits: { rtprio: 99 } }, allowed: { ulimits: { nofile: 1024 } } },
    "build.ssh": { set: { image: undefined, build: { context: ".", ssh: ["default"] } } },
    "build.secrets": { set: { image: undefined, build: { context: ".", secrets: ["npmrc"] } } },
    "build.cache_to": {
      set: { image: undefined, build: { context: ".", cache_to: ["type=local,dest=/var/cache/b"] } },
      allowed: { build: { context: ".", cache_to: ["type=inline"] } },
    },
    "build.cache_from": {
      set: { image: undefined, build: { context: ".", cache_from: ["type=local,src=/home"] } },
      allowed: { build: { context: ".", cache_from: ["type=registry,ref=example.com/c"] } },
    },
  };
  const TOP_FOR: Readonly<Record<string, Record<string, unknown>>> = {
    models: { models: { llm: { model: "ai/smollm2" } } },
    "build.secrets": { secrets: { npmrc: { file: "./npmrc" } } },
  };
  const plain = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined));

  it.each(entries.filter(([, v]) => v.v === "refused"))("%s: refused when set", async (p) => {
    const sample = SAMPLES[p];
    expect(sample, `a sample value for ${p}`).toBeDefined();
    if (sample === undefined) return;
    const rule = p === "provider" ? undefined : "sandbox-disallow-unjudged-fields";
    const r = await scanFiles({
      "compose.yaml": stringify({ services: { app: plain({ ...BASE, ...sample.set }) }, ...TOP_FOR[p] }),
      labels: "sandbox.role=broker\n",
      npmrc: "x\n",
    });
    // A provider service is refused as a whole (it runs a host program, not a container).
    if (rule === undefined) expect(r.code).not.toBe(0);
    else
      expect(
        r.report.findings.filter(blocking).map((f) => f.ruleId),
        JSON.stringify(r.report.errors),
      ).toContain(rule);
    if (sample.allowed !== undefined)
      expect(await failing(plain({ ...BASE, ...sample.allowed }), TOP_FOR[p])).not.toContain(
        "sandbox-disallow-unjudged-fields",
      );
  });

  it("refuses a key the claimed schema does not have, and passes an x- extension", async () => {
    expect(await failing({ ...BASE, kernel_memory: "64m" })).toContain("sandbox-disallow-unjudged-fields");
    expect(await failing({ ...BASE, "x-note": "anything" })).toEqual([]);
  });
});
