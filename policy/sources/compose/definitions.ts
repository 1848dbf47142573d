/**
 * The keys of the project definitions a service uses (the networks it joins, the named volumes it mounts, the
 * secrets and configs it names) that fail closed: keys the claimed Compose schema does not have, and keys whose
 * verdict is refused (verdicts-project.ts), each where it is written and reported on the service.
 */
import { isGoZero, type UnjudgedField, verdictFor } from "../verdict";
import { COMPOSE_DEFS, COMPOSE_SPEC } from "./schema.generated";
import { COMPOSE_DEFINITION_VERDICTS } from "./verdicts-project";

type Model = Record<string, unknown>;

const isMap = (v: unknown): v is Model => typeof v === "object" && v !== null && !Array.isArray(v);

/** The names a service refers to in one of its lists (`secrets: [a, {source: b}]`, `networks: {n: {}}`). */
function refs(v: unknown): string[] {
  if (isMap(v)) return Object.keys(v);
  if (!Array.isArray(v)) return [];
  return v.flatMap((x) =>
    typeof x === "string" ? [x] : isMap(x) && typeof x.source === "string" ? [x.source] : [],
  );
}

/** The named volumes a service mounts: the source of a `volume` entry, or of a short spec that is not a path. */
function volumeRefs(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((x) => {
    if (isMap(x)) return x.type === "volume" && typeof x.source === "string" ? [x.source] : [];
    if (typeof x !== "string") return [];
    const source = x.split(":")[0] ?? "";
    return source === "" || /^[./~$]/.test(source) || source.includes("/") || x.split(":").length < 2
      ? []
      : [source];
  });
}

/** Every unknown or refused key of one definition (`kind` is the schema's definition), written under `base`. */
function definitionFields(def: Model, kind: string, base: string, who: string): UnjudgedField[] {
  const table = COMPOSE_DEFINITION_VERDICTS[kind] ?? {};
  const known = new Set((COMPOSE_DEFS[kind] ?? []).filter((p) => !p.includes(".") && !p.includes("[]")));
  const out: UnjudgedField[] = [];
  const check = (key: string, v: unknown) => {
    const verdict = verdictFor(table, key);
    if (verdict === undefined)
      out.push({
        path: `${base}.${key}`,
        field: key,
        reason: `${who}: the project has no verdict for ${key}`,
      });
    else if (verdict.v === "refused" && !isGoZero(v) && verdict.allows?.(v) !== true)
      out.push({ path: `${base}.${key}`, field: `${kind}.${key}`, reason: `${who}: ${verdict.why}` });
  };
  for (const [k, v] of Object.entries(def)) {
    if (k.startsWith("x-")) continue;
    if (!known.has(k)) {
      out.push({
        path: `${base}.${k}`,
        field: k,
        reason: `${who}: it is not a key of a Compose ${kind} in ${COMPOSE_SPEC.module} ${COMPOSE_SPEC.version}, the Compose the project claims`,
      });
      continue;
    }
    check(k, v);
    if (isMap(v))
      for (const [k2, v2] of Object.entries(v))
        if ((COMPOSE_DEFS[kind] ?? []).includes(`${k}.${k2}`)) check(`${k}.${k2}`, v2);
  }
  return out;
}

/** The unknown or refused keys of every definition service `name` uses, as fields that fail closed on it. */
export function usedDefinitionFields(name: string, service: Model, project: Model): UnjudgedField[] {
  const uses: [top: string, kind: string, names: string[]][] = [
    [
      "networks",
      "network",
      service.networks === undefined && service.network_mode === undefined
        ? ["default"]
        : refs(service.networks),
    ],
    ["volumes", "volume", volumeRefs(service.volumes)],
    ["secrets", "secret", refs(service.secrets)],
    ["configs", "config", refs(service.configs)],
  ];
  const out: UnjudgedField[] = [];
  for (const [top, kind, names] of uses) {
    const defs = isMap(project[top]) ? project[top] : {};
    for (const n of new Set(names)) {
      const def = defs[n];
      if (isMap(def))
        out.push(...definitionFields(def, kind, `${top}.${n}`, `service "${name}" uses ${kind} "${n}"`));
    }
  }
  return out;
}
