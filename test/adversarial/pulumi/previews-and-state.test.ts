/**
 * Class 5: Pulumi documents. `pulumi preview --json` prints every secret as "[secret]", also one element of
 * a list; `pulumi stack export` writes a secret as {sig: secret-sig, ciphertext|plaintext}, and with --show-secrets
 * a secret whose value holds another secret keeps the inner envelope inside the outer plaintext. A step's op does
 * not change what will run: `same`, `update` and `replace` steps carry the new state the engine keeps. An export's
 * `pending_operations` lists resources whose `creating` the engine started and may have finished (Pulumi's docs on
 * interrupted updates: the resource may exist in the provider), with their inputs.
 */
import { blocked, cases, type Files, passes } from "../harness";

const SIG = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const URN = "urn:pulumi:dev::app::docker:index/container:Container::task";
const TYPE = "docker:index/container:Container";

const safe = (): Record<string, unknown> => ({
  name: "task",
  image: "busybox:1.36",
  user: "1000:1000",
  capabilities: { drops: ["ALL"] },
  securityOpts: ["no-new-privileges:true"],
  readOnly: true,
  memory: 128,
  cpuShares: 512,
  cpus: "0.5",
  pidsLimit: 64,
  networkMode: "none",
  restart: "no",
});

function preview(inputs: Record<string, unknown>, op = "create"): Files {
  const step = {
    op,
    urn: URN,
    provider: "",
    newState: { urn: URN, custom: true, type: TYPE, inputs, outputs: {} },
  };
  return {
    "preview.json": `${JSON.stringify({ config: {}, steps: [step], changeSummary: { [op]: 1 } }, null, 2)}\n`,
  };
}

function state(inputs: Record<string, unknown>, pending?: Record<string, unknown>): Files {
  const stack = {
    urn: "urn:pulumi:dev::app::pulumi:pulumi:Stack::app-dev",
    custom: false,
    type: "pulumi:pulumi:Stack",
  };
  const resources =
    pending === undefined
      ? [stack, { urn: URN, custom: true, id: "0123abcd", type: TYPE, inputs, outputs: inputs }]
      : [stack];
  const deployment: Record<string, unknown> = {
    manifest: { time: "2025-01-01T00:00:00Z", magic: "0".repeat(64), version: "v3.200.0" },
    secrets_providers: { type: "passphrase", state: { salt: "v1:AAAA:v1:BBBB:CCCC" } },
    resources,
  };
  if (pending !== undefined)
    deployment.pending_operations = [
      { resource: { urn: URN, custom: true, type: TYPE, inputs: pending }, type: "creating" },
    ];
  return { "stack.json": `${JSON.stringify({ version: 3, deployment }, null, 2)}\n` };
}

/** A preview of a docker.Network beside the container, which joins it by its engine name. */
function withNetwork(network: Record<string, unknown>, container: Record<string, unknown>): Files {
  const netUrn = "urn:pulumi:dev::app::docker:index/network:Network::lan";
  const steps = [
    {
      op: "create",
      urn: netUrn,
      provider: "",
      newState: {
        urn: netUrn,
        custom: true,
        type: "docker:index/network:Network",
        inputs: network,
        outputs: {},
      },
    },
    {
      op: "create",
      urn: URN,
      provider: "",
      newState: { urn: URN, custom: true, type: TYPE, inputs: container, outputs: {} },
    },
  ];
  return {
    "preview.json": `${JSON.stringify({ config: {}, steps, changeSummary: { create: 2 } }, null, 2)}\n`,
  };
}

const plaintext = (v: unknown) => ({ [SIG]: SECRET_SIG, plaintext: JSON.stringify(v) });

cases("class 5: secrets inside lists and inside secrets", [
  {
    name: 'capabilities.adds: ["[secret]"] (one element of the list a secret)',
    files: preview({ ...safe(), capabilities: { drops: ["ALL"], adds: ["[secret]"] } }),
    plain: preview({ ...safe(), capabilities: { drops: ["ALL"], adds: ["SYS_ADMIN"] } }),
    want: blocked(undefined, "task"),
  },
  {
    name: 'ports: [{internal: 80, external: "[secret]"}]',
    files: preview({ ...safe(), networkMode: "bridge", ports: [{ internal: 80, external: "[secret]" }] }),
    plain: preview({ ...safe(), networkMode: "bridge", ports: [{ internal: 80, external: 8080 }] }),
    want: blocked("sandbox-disallow-exposed-ports", "task"),
  },
  {
    name: "privileged as a plaintext secret whose value is itself a secret envelope (true)",
    files: state({ ...safe(), privileged: plaintext(plaintext(true)) }),
    plain: state({ ...safe(), privileged: true }),
    want: blocked(undefined, "task"),
  },
  {
    name: "volumes: a plaintext secret list whose element's hostPath is another secret (docker.sock)",
    files: state({
      ...safe(),
      volumes: plaintext([{ hostPath: plaintext("/var/run/docker.sock"), containerPath: "/s" }]),
    }),
    plain: state({ ...safe(), volumes: [{ hostPath: "/var/run/docker.sock", containerPath: "/s" }] }),
    want: blocked(undefined, "task"),
  },
]);

cases("class 5: step ops and pending operations", [
  {
    name: "a preview step with op: same (unchanged, still running privileged)",
    files: preview({ ...safe(), privileged: true }, "same"),
    plain: preview({ ...safe(), privileged: true }),
    want: blocked("sandbox-disallow-privileged", "task"),
  },
  {
    name: "a preview step with op: replace",
    files: preview({ ...safe(), privileged: true }, "replace"),
    plain: preview({ ...safe(), privileged: true }),
    want: blocked("sandbox-disallow-privileged", "task"),
  },
  {
    name: "a stack export whose privileged container is only in pending_operations (creating)",
    files: state({}, { ...safe(), privileged: true }),
    plain: state({ ...safe(), privileged: true }),
    want: blocked("sandbox-disallow-privileged", "task"),
  },
]);

cases("class 5: a docker.Network's driver is the wall of every container on it", [
  ...["macvlan", "ipvlan", "overlay"].flatMap((driver) => [
    {
      name: `a docker.Network of driver ${driver}, joined by networkMode`,
      files: withNetwork({ name: "lan", driver }, { ...safe(), networkMode: "lan" }),
      want: blocked("sandbox-disallow-open-bridge", "lan"),
    },
    {
      name: `a docker.Network of driver ${driver}, joined by networksAdvanced`,
      files: withNetwork(
        { name: "lan", driver, options: { parent: "eth0" } },
        { ...safe(), networkMode: "bridge", networksAdvanced: [{ name: "lan" }] },
      ),
      want: blocked("sandbox-disallow-open-bridge", "lan"),
    },
  ]),
  {
    name: "an internal bridge network with inter-container traffic off, joined by networkMode, passes",
    files: withNetwork(
      {
        name: "lan",
        driver: "bridge",
        internal: true,
        options: { "com.docker.network.bridge.enable_icc": "false" },
      },
      { ...safe(), networkMode: "lan" },
    ),
    want: passes,
  },
]);
