/**
 * Differential oracles: small Go programs under `test/oracles/<name>/` (each its own module with go.mod and go.sum)
 * that decode an input with the very library the engine uses (sigs.k8s.io/yaml for kubectl and the API server,
 * compose-go for Compose, encoding/json for the Docker Engine API) and print what the engine would see as JSON.
 * Tests compare the scanner's reading with the oracle's on generated inputs.
 *
 * Built once per source hash and Go version into `${XDG_CACHE_HOME:-~/.cache}/sandbox-projects/oracles/`, with the
 * same Go settings as toolchain/setup.sh (the Go on PATH or /usr/local/go/bin, no toolchain switch, modules from
 * GOPROXY only).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

const ORACLES = resolve(__dirname, "..", "oracles");

function goBinary(): string {
  for (const candidate of ["go", "/usr/local/go/bin/go"]) {
    const r = spawnSync(candidate, ["version"], { encoding: "utf8" });
    if (r.status === 0) return candidate;
  }
  throw new Error(
    "the differential oracles need Go on PATH (or at /usr/local/go/bin), as toolchain/setup.sh does",
  );
}

function goEnv(go: string): NodeJS.ProcessEnv {
  const proxy = execFileSync(go, ["env", "GOPROXY"], { encoding: "utf8" })
    .trim()
    .replace(/[,|]direct$/, "");
  return {
    ...process.env,
    GOTOOLCHAIN: "local",
    // No debug information: an oracle is run, never debugged (about a tenth of its compile time, cold).
    GOFLAGS: "-mod=mod -buildvcs=false -gcflags=all=-dwarf=false -ldflags=-w",
    CGO_ENABLED: "0",
    GOPROXY: proxy === "" || proxy === "direct" ? "https://proxy.golang.org" : proxy,
  };
}

const built = new Map<string, string>();

/**
 * The environment the oracles build in (the Go found as above first on PATH, no toolchain switch, modules from
 * GOPROXY only), for a test that runs a Go program of the project itself (toolchain/schemas).
 */
export function goEnvironment(): NodeJS.ProcessEnv {
  const go = goBinary();
  const env = goEnv(go);
  const dir = go.includes("/") ? go.slice(0, go.lastIndexOf("/")) : undefined;
  return dir === undefined ? env : { ...env, PATH: `${dir}:${env.PATH ?? ""}` };
}

/** The path of the built oracle `name`, building it when its sources or the Go version changed. */
export function oracleBinary(name: string): string {
  const cached = built.get(name);
  if (cached !== undefined) return cached;
  const dir = join(ORACLES, name);
  const go = goBinary();
  const version = execFileSync(go, ["env", "GOVERSION"], { encoding: "utf8" }).trim();
  const hash = createHash("sha256").update(version);
  for (const f of readdirSync(dir).sort()) hash.update(f).update(readFileSync(join(dir, f)));
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "sandbox-projects", "oracles");
  const out = join(cache, `${name}-${hash.digest("hex").slice(0, 16)}`);
  if (!existsSync(out)) {
    mkdirSync(cache, { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    const r = spawnSync(go, ["build", "-o", tmp, "."], { cwd: dir, env: goEnv(go), encoding: "utf8" });
    if (r.status !== 0) throw new Error(`building the ${name} oracle failed:\n${r.stderr}`);
    renameSync(tmp, out);
  }
  built.set(name, out);
  return out;
}

/** Runs oracle `name` with `args` and `input` on standard input; returns its standard output. */
export function runOracle(name: string, input: string, args: readonly string[] = []): string {
  const r = spawnSync(oracleBinary(name), args, { input, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`the ${name} oracle failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}
