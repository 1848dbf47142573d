/** The Kubernetes pod volumes of a workload view, as the volume and credential rules read them. */
import type { Val } from "./workload";

/** A Kubernetes pod volume (`spec.volumes[i]`) and the keys that name its source (`nfs`, `emptyDir`, ...). */
export interface PodVolumeView {
  readonly name: Val<string>;
  readonly sources: Val<readonly string[]>;
  /** The ConfigMaps the volume holds (a `configMap` volume, projected `configMap` sources), with the keys it selects. */
  readonly configMaps?: readonly ConfigMapUse[];
  readonly path: string;
  /** For a `csi` volume: its `csi.driver`. */
  readonly csiDriver?: Val<string>;
}

/** A ConfigMap a volume holds: its name, and the keys of `items` (undefined: every key). */
export interface ConfigMapUse {
  readonly name: Val<string>;
  readonly keys: readonly Val<string>[] | undefined;
  readonly path: string;
}
