/**
 * Class 1: format decoys. `scan` decides what a file is from keys that the engine which would apply it
 * ignores, so a key the engine never reads must not turn a dangerous input into a skipped one.
 *
 * - The Docker daemon decodes a create body with encoding/json into container.CreateRequest (docker v28.5.2,
 *   runconfig.decodeContainerConfig): unknown keys such as `kind`, `apiVersion`, `steps` or `deployment` are ignored,
 *   so a body that also carries them still starts the container it describes (checked with the engine-json oracle:
 *   `{"Image":"b","kind":"x","HostConfig":{"Privileged":true}}` decodes to Privileged true, no error).
 * - Compose reads YAML with yaml v3, which resolves aliases and `<<` merge keys (also at the top level, also an
 *   alias used as a key) before compose-go sees the model (checked with the compose oracle: `services: *s`,
 *   `<<: *s` and `*k :` with `k` anchoring "services" all load a privileged service `app`).
 */
import { compose, engineBody } from "../fixtures";
import { blocked, cases } from "../harness";

const P = blocked("sandbox-disallow-privileged");
const privBody = (extra: Record<string, unknown>): string => {
  const body = JSON.parse(engineBody({}, { Privileged: true })) as Record<string, unknown>;
  return `${JSON.stringify({ ...extra, ...body }, null, 2)}\n`;
};
const plainBody = { "body.json": engineBody({}, { Privileged: true }) };

cases("class 1: Engine API create bodies carrying keys the daemon ignores", [
  {
    name: 'body with an extra "kind" key (daemon ignores it)',
    files: { "body.json": privBody({ kind: "Container" }) },
    plain: plainBody,
    want: P,
  },
  {
    name: 'body with "kind": "sandbox.launch/v1" (a launch spec decoy; the daemon still reads HostConfig)',
    files: { "body.json": privBody({ kind: "sandbox.launch/v1", project: "p", template: "t" }) },
    plain: plainBody,
    want: P,
  },
  {
    name: 'body with an extra "steps": [] key (a preview decoy)',
    files: { "body.json": privBody({ steps: [] }) },
    plain: plainBody,
    want: P,
  },
  {
    name: 'body with an extra "deployment": {} key (a stack export decoy)',
    files: { "body.json": privBody({ deployment: {} }) },
    plain: plainBody,
    want: P,
  },
  {
    name: 'body with "apiVersion": "v1" and "kind": "Pod" (a Kubernetes decoy without a pod spec)',
    files: { "body.json": privBody({ apiVersion: "v1", kind: "Pod" }) },
    plain: plainBody,
    want: P,
  },
]);

const SVC = `    image: busybox:1.36\n    privileged: true\n`;
const plainCompose = { "compose.yaml": compose("app", "privileged: true") };

cases("class 1: a Compose file whose services map is not written literally", [
  {
    name: "services: *s (the map is an alias of an x- extension)",
    files: { "compose.yaml": `x-s: &s\n  app:\n${SVC}services: *s\n` },
    plain: plainCompose,
    want: P,
  },
  {
    name: "top-level <<: *s merging a map that holds services",
    files: {
      "compose.yaml": `x-s: &s\n  services:\n    app:\n  ${SVC.replace("\n    ", "\n      ")}<<: *s\n`,
    },
    plain: plainCompose,
    want: P,
  },
  {
    name: 'the key services written as an alias (*k : with k anchoring "services")',
    files: { "compose.yaml": `x-k: &k services\n*k :\n  app:\n${SVC}` },
    plain: plainCompose,
    want: P,
  },
  {
    name: 'services key with an explicit !!str tag ("!!str services:")',
    files: { "compose.yaml": `!!str services:\n  app:\n${SVC}` },
    plain: plainCompose,
    want: P,
  },
]);
