/**
 * What a pod spec asks the node to set up besides its containers: each volume's source kinds (`nfs`, `iscsi`,
 * `flexVolume`, ...), which Pod Security restricted's `restrictedVolumes` judges, and the devices it claims through
 * Dynamic Resource Allocation (`spec.resourceClaims`, `resources.claims`).
 */
import { type ConfigMapUse, isUnknown, type PodVolumeView, type Val } from "../../workload";
import { at, field, isObj, items, join, list, str, unreadable } from "../lenient";

/**
 * Every entry of `spec.volumes` with the keys that name its source: all its keys but `name` whose value is not
 * null (the API decodes a null source as unset). The API admits one source a volume; the rule judges each key
 * written, so a second key is never a place to hide one.
 */
export function podVolumeSources(spec: unknown, specPath: string): Val<readonly PodVolumeView[]> {
  const l = list(field(spec, "volumes"));
  if (isUnknown(l)) return l;
  return (l ?? []).map((v, i): PodVolumeView => {
    const path = join(join(specPath, "volumes"), i);
    const name = str(field(v, "name"));
    if (isUnknown(v)) return { name, sources: v, path };
    if (!isObj(v)) return { name, sources: unreadable(v, "a volume"), path };
    const sources = Object.entries(v)
      .filter(([k, x]) => k !== "name" && x !== null && x !== undefined)
      .map(([k]) => k);
    const configMaps = [
      ...(field(v, "configMap") === undefined
        ? []
        : [configMapUse(field(v, "configMap"), join(path, "configMap"))]),
      ...items(at(v, "projected.sources")).flatMap((s, j) =>
        field(s, "configMap") === undefined
          ? []
          : [configMapUse(field(s, "configMap"), `${join(path, "projected.sources")}[${j}].configMap`)],
      ),
    ];
    const csi = v.csi;
    return {
      name,
      sources,
      path,
      ...(configMaps.length === 0 ? {} : { configMaps }),
      ...(csi === undefined || csi === null ? {} : { csiDriver: str(field(csi, "driver")) }),
    };
  });
}

/**
 * The pod's Dynamic Resource Allocation claims (`spec.resourceClaims`), each as `name (template or claim)`, and the
 * claims each container names in `resources.claims`. The kubelet has the claim's DRA driver prepare the allocated
 * device, and the runtime injects its device nodes (CDI) into the containers that name it.
 */
export function podResourceClaims(spec: unknown, specPath: string): string[] {
  return items(field(spec, "resourceClaims")).map((c, i) => {
    const name = str(field(c, "name"));
    const template = str(field(c, "resourceClaimTemplateName"));
    const claim = str(field(c, "resourceClaimName"));
    const shown = (v: Val<string>) => (typeof v === "string" ? v : isUnknown(v) ? "?" : "");
    const from =
      template !== undefined
        ? ` from ResourceClaimTemplate ${shown(template)}`
        : claim !== undefined
          ? ` from ResourceClaim ${shown(claim)}`
          : "";
    return `resource claim ${shown(name) || `#${i}`}${from} at ${join(join(specPath, "resourceClaims"), i)}`;
  });
}

/** A `configMap` volume or projected source: its name and the keys its `items` select. */
function configMapUse(o: unknown, path: string): ConfigMapUse {
  const selected = field(o, "items");
  return {
    name: str(field(o, "name")),
    keys: selected === undefined ? undefined : items(selected).map((i) => str(field(i, "key"))),
    path,
  };
}
