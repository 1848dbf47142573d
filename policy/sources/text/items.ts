/** What the scan's readers produce: the resources to judge, what was skipped, and what could not be read. */

import type { InputError, Location, ResourceRef, Skipped } from "../../report/model";
import type { ProjectFiles } from "../compose/discover";
import type { TaintCheck } from "../lenient";

/** What a Pulumi document says about a resource beyond its props, for the stack rules. */
export interface StackInfo {
  /** One stack per input file. */
  readonly stack: string;
  readonly urn: string;
  readonly parent?: string;
  readonly propertyDependencies: Readonly<Record<string, readonly string[]>>;
  readonly additionalSecretOutputs: readonly string[];
  /** False for a component resource (`custom: false` in the document): it runs nothing itself. */
  readonly custom?: boolean;
}

/** One resource to judge. */
export interface ScanItem {
  readonly type: string;
  readonly props: unknown;
  readonly name: string;
  readonly resource: ResourceRef;
  readonly taint: TaintCheck;
  /** Where a finding at a resource path (`spec.containers[0].securityContext`) points. */
  readonly locate: (path: string | undefined) => Location;
  readonly stack?: StackInfo;
  /** Values the reading assumed (Compose: variables taken from the environment or `.env`, or unset). */
  readonly assumptions?: readonly string[];
  /**
   * The object as the engine recorded it after the API server answered (a Pulumi state's `outputs`: defaults and
   * admission mutations included), judged by the per-object rules after its inputs (`stack` left out: the stack
   * rules judge the inputs); a finding its inputs already got is not repeated.
   */
  readonly live?: boolean;
  /** Job roots the input declares for its own job folders (the toolkit's launch spec: `jobFolder.hostRoot`). */
  readonly jobRoots?: readonly string[];
}

export interface Parsed {
  readonly items: ScanItem[];
  readonly skipped: Skipped[];
  readonly errors: InputError[];
}

/**
 * What a reader may see around an input: Compose reads `.env`, `env_file`, `extends` and `include` files next to the
 * Compose file, and interpolates from the environment.
 */
export interface InputHost {
  /** The input's absolute path, when it is a file (not standard input). */
  readonly path?: string;
  /** Reads another file (absolute path); throws when it cannot be read. */
  readonly readFile: (absolutePath: string) => string;
  /** The environment Compose interpolates from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether a path exists (Compose's file discovery stats its default names); reading it is the fallback. */
  readonly exists?: (absolutePath: string) => boolean;
  /** The name a path is reported by. */
  readonly display?: (absolutePath: string) => string;
  /** Shared by every input of one scan: the Compose projects already found and reported. */
  readonly compose?: ComposeRegistry;
}

/** The Compose projects of one scan: each folder's discovered files, and the projects already reported. */
export interface ComposeRegistry {
  readonly folders: Map<string, ProjectFiles | undefined>;
  readonly reported: Set<string>;
}

export const NO_HOST: InputHost = {
  readFile: (p) => {
    throw new Error(`${p} cannot be read here`);
  },
  env: {},
};
