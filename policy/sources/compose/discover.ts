/**
 * Which files `docker compose` loads when it is run with no `-f` in a folder (docker/compose `toProjectOptions`,
 * compose-go `cli/options.go`): the environment, then the folder's `.env` (unless COMPOSE_DISABLE_ENV_FILE is true),
 * fill the project environment; `COMPOSE_FILE` there lists the files, split at `COMPOSE_PATH_SEPARATOR` (`:` on
 * Linux and macOS); without it, the first of compose.yaml, compose.yml, docker-compose.yml, docker-compose.yaml
 * in the folder, then the first of their override files. The project's working folder is the first file's, whose
 * `.env` is read too. The scan assumes compose is run in the folder of the Compose file it reads.
 */
import { dirname, isAbsolute, join } from "node:path";
import { parseDotenv } from "./dotenv";

/** compose-go `cli.DefaultFileNames` and `cli.DefaultOverrideFileNames`, in their order of preference. */
export const DEFAULT_FILE_NAMES = [
  "compose.yaml",
  "compose.yml",
  "docker-compose.yml",
  "docker-compose.yaml",
];
export const DEFAULT_OVERRIDE_FILE_NAMES = [
  "compose.override.yml",
  "compose.override.yaml",
  "docker-compose.override.yml",
  "docker-compose.override.yaml",
];

/** What discovery may touch. */
export interface DiscoveryHost {
  readonly readFile: (absolutePath: string) => string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether a path exists (compose-go stats it); reading it is the fallback. */
  readonly exists?: (absolutePath: string) => boolean;
}

/** The files compose loads in a folder, in merge order, and what the scan assumed to pick them. */
export interface ProjectFiles {
  readonly folder: string;
  readonly files: readonly string[];
  /** `.env` files of the project environment, in the order compose reads them (earlier ones win). */
  readonly envFiles: readonly string[];
  readonly assumptions: readonly string[];
}

function exists(host: DiscoveryHost, path: string): boolean {
  if (host.exists !== undefined) return host.exists(path);
  try {
    host.readFile(path);
    return true;
  } catch {
    return false;
  }
}

/** Go's strconv.ParseBool truth. */
function goTrue(v: string | undefined): boolean {
  return v !== undefined && ["1", "t", "T", "TRUE", "true", "True"].includes(v);
}

/** The names a `.env` file sets, under the environment (which wins); an unreadable or bad file sets none here. */
function dotenv(host: DiscoveryHost, path: string, env: Map<string, string>): Map<string, string> {
  const read = new Map<string, string>();
  try {
    parseDotenv(host.readFile(path), path, (k) => env.get(k), read);
  } catch {
    // The loader reads the same file again and reports what is wrong with it.
  }
  return read;
}

/**
 * The project `docker compose` (no `-f`) loads in `folder`, or undefined when it loads none there (no Compose file,
 * or a COMPOSE_FILE naming a file that is not there: compose refuses to start).
 */
export function discoverProject(
  folder: string,
  host: DiscoveryHost,
  show: (path: string) => string = (p) => p,
): ProjectFiles | undefined {
  const env = new Map<string, string>();
  const origin = new Map<string, string>();
  for (const [k, v] of Object.entries(host.env))
    if (v !== undefined) {
      env.set(k, v);
      origin.set(k, "the environment");
    }
  const envFiles: string[] = [];
  const useDotenv = !goTrue(host.env.COMPOSE_DISABLE_ENV_FILE);
  const addDotenv = (dir: string) => {
    const path = join(dir, ".env");
    if (!useDotenv || envFiles.includes(path) || !exists(host, path)) return;
    envFiles.push(path);
    for (const [k, v] of dotenv(host, path, env))
      if (!env.has(k)) {
        env.set(k, v);
        origin.set(k, show(path));
      }
  };
  addDotenv(folder);
  const assumptions: string[] = [];
  const run = `docker compose run in ${show(folder)} with no -f`;
  let files: string[];
  const listed = env.get("COMPOSE_FILE");
  if (listed !== undefined) {
    const sep = env.get("COMPOSE_PATH_SEPARATOR") || ":";
    files = listed.split(sep).map((f) => (isAbsolute(f) ? f : join(folder, f)));
    // compose-go refuses an empty entry, standard input cannot be read here, and a missing file stops compose.
    if (listed.split(sep).some((f) => f === "" || f === "-") || !files.every((f) => exists(host, f)))
      return undefined;
    const how = env.has("COMPOSE_PATH_SEPARATOR")
      ? ` split at COMPOSE_PATH_SEPARATOR from ${origin.get("COMPOSE_PATH_SEPARATOR")}`
      : "";
    assumptions.push(
      `${run} loads ${files.map(show).join(", ")}: COMPOSE_FILE from ${origin.get("COMPOSE_FILE")}${how}`,
    );
  } else {
    const main = DEFAULT_FILE_NAMES.map((n) => join(folder, n)).find((f) => exists(host, f));
    if (main === undefined) return undefined;
    const override = DEFAULT_OVERRIDE_FILE_NAMES.map((n) => join(folder, n)).find((f) => exists(host, f));
    files = override === undefined ? [main] : [main, override];
    if (override !== undefined)
      assumptions.push(`${run} loads ${files.map(show).join(" and then ")} (its default file names), merged`);
  }
  const first = files[0];
  if (first !== undefined) addDotenv(dirname(first));
  const profiles = env.get("COMPOSE_PROFILES");
  if (profiles !== undefined)
    assumptions.push(
      `COMPOSE_PROFILES from ${origin.get("COMPOSE_PROFILES")} selects the profiles "${profiles}"; every service is judged whatever its profiles, as --profile may start any`,
    );
  return { folder, files, envFiles, assumptions };
}
