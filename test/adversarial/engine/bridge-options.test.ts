/**
 * Bridge options that reach the host (policy/sources/docker/bridge.ts) get one verdict in every format that carries
 * them: an Engine network create body, a Compose network's driver_opts (on the services that join it) and a
 * `docker.Network`'s options (the pack's stack rule); every value Go's strconv.ParseBool reads as true turns
 * inter-container traffic on, every false one keeps it off.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { checkBridgeOptions, DOCKER_NETWORK_TYPE } from "../../../policy/stack/disallow-open-bridge";
import { blocking, scanFiles } from "../harness";

const ICC = "com.docker.network.bridge.enable_icc";
const GATEWAY = "com.docker.network.bridge.gateway_mode_ipv4";
const NAME = "com.docker.network.bridge.name";

const SERVICE = {
  image: "busybox:1.36",
  user: "1000:1000",
  read_only: true,
  cap_drop: ["ALL"],
  security_opt: ["no-new-privileges:true"],
  mem_limit: "128m",
  cpus: 0.5,
  pids_limit: 64,
  networks: ["tasks"],
};

/** Whether each format refuses the options. */
async function verdicts(options: Record<string, string>): Promise<boolean[]> {
  const body = await scanFiles({
    "network.json": JSON.stringify({ Name: "tasks", Driver: "bridge", Internal: true, Options: options }),
  });
  const composed = await scanFiles({
    "compose.yaml": stringify({
      services: { app: SERVICE },
      networks: { tasks: { internal: true, driver_opts: options } },
    }),
  });
  const pack = checkBridgeOptions([
    { type: DOCKER_NETWORK_TYPE, name: "tasks", urn: "u", props: { internal: true, options } },
  ]);
  return [body.report.findings.some(blocking), composed.report.findings.some(blocking), pack.length > 0];
}

describe("bridge options, in every format (generated)", () => {
  it("inter-container traffic: true in every ParseBool spelling is refused, false in every spelling passes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom("1", "t", "T", "TRUE", "true", "True").map((v) => [v, true] as const),
          fc.constantFrom("0", "f", "F", "FALSE", "false", "False").map((v) => [v, false] as const),
        ),
        async ([value, open]) => {
          expect(await verdicts({ [ICC]: value })).toEqual([open, open, open]);
        },
      ),
      { numRuns: 12 },
    );
  });

  it("gateway modes and bridge names: the open ones refused, the closed ones passed, the same everywhere", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom("routed", "nat-unprotected").map((v) => [{ [GATEWAY]: v }, true] as const),
          fc.constantFrom("nat", "isolated").map((v) => [{ [GATEWAY]: v }, false] as const),
          fc
            .constantFrom("docker0", "br-3f2a9c1d7e6b", "virbr0", "cni0")
            .map((v) => [{ [NAME]: v }, true] as const),
          fc.constantFrom("sbx-tasks0", "tasks-br").map((v) => [{ [NAME]: v }, false] as const),
        ),
        async ([options, open]) => {
          expect(await verdicts({ [ICC]: "false", ...options })).toEqual([open, open, open]);
        },
      ),
      { numRuns: 12 },
    );
  });
});
