/**
 * The environment a Compose project is loaded in, as compose-go builds it: the caller's environment, then each
 * `.env` or `env_file` whose names it does not already set; where each value came from, for the scan's assumptions.
 */
import { parseDotenv } from "./dotenv";
import type { Lookup } from "./interpolate";
import { ComposeError } from "./yaml";

/** What the loader may read. */
export interface ComposeHost {
  readonly readFile: (absolutePath: string) => string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The project environment: the caller's environment, then `.env` files; where each name came from. */
export class Environment {
  readonly values = new Map<string, string>();
  readonly origin = new Map<string, string>();
  readonly used = new Map<string, string>();

  static fromHost(env: ComposeHost["env"]): Environment {
    const e = new Environment();
    for (const [k, v] of Object.entries(env))
      if (v !== undefined) {
        e.values.set(k, v);
        e.origin.set(k, "the environment");
      }
    return e;
  }

  clone(): Environment {
    const e = new Environment();
    for (const [k, v] of this.values) e.values.set(k, v);
    for (const [k, v] of this.origin) e.origin.set(k, v);
    return e;
  }

  /** Adds an env file's names that the environment does not already set. */
  addFile(host: ComposeHost, path: string, display: string, required: boolean): void {
    let text: string;
    try {
      text = host.readFile(path);
    } catch {
      if (required) throw new ComposeError(`couldn't find env file: ${display}`);
      return;
    }
    const read = new Map<string, string>();
    parseDotenv(text, display, (k) => this.values.get(k), read);
    for (const [k, v] of read)
      if (!this.values.has(k)) {
        this.values.set(k, v);
        this.origin.set(k, display);
      }
  }

  lookup(used: Map<string, string>): Lookup {
    return (name) => {
      const v = this.values.get(name);
      if (!used.has(name))
        used.set(
          name,
          v === undefined
            ? `\${${name}} is not set: read as its default or an empty string`
            : `\${${name}} taken from ${this.origin.get(name) ?? "the environment"}`,
        );
      return v;
    };
  }
}
