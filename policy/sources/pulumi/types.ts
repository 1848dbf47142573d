/**
 * The verdict of every resource type of the Pulumi providers the project reads beside Kubernetes: `docker` (5.2.0),
 * `docker-build` (0.0.22) and `command` (1.2.1), as their SDKs (generated from the providers' schemas) name them.
 * test/policy/sources/pulumi/types.test.ts fails on a type of the installed SDKs with no verdict. A refused type is
 * an object the rules cannot judge: sandbox-disallow-unjudged-workloads fails closed on it in every mode.
 */
export type TypeVerdict =
  | { readonly v: "inert"; readonly why: string }
  | { readonly v: "judged"; readonly rules: readonly string[] }
  | { readonly v: "refused"; readonly why: string };

const inert = (why: string): TypeVerdict => ({ v: "inert", why });
const judged = (...rules: string[]): TypeVerdict => ({ v: "judged", rules });
const refused = (why: string): TypeVerdict => ({ v: "refused", why });

/** The SDK packages whose types the table covers, with their versions. */
export const PULUMI_PROVIDER_PACKAGES = {
  "@pulumi/docker": "5.2.0",
  "@pulumi/docker-build": "0.0.22",
  "@pulumi/command": "1.2.1",
} as const;

export const PULUMI_TYPE_VERDICTS: Readonly<Record<string, TypeVerdict>> = {
  "docker:index/container:Container": judged(
    "sandbox-disallow-exposed-ports",
    "sandbox-disallow-runtime-socket",
    "sandbox-disallow-privileged",
    "sandbox-require-drop-net-admin",
  ),
  "docker:index/network:Network": judged("sandbox-disallow-open-bridge", "sandbox-require-proxy-only-egress"),
  "docker:index/volume:Volume": judged("sandbox-disallow-host-path-claims"),
  "docker:index/service:Service": refused(
    "a Docker swarm service runs containers whose task spec no rule reads",
  ),
  "docker:index/plugin:Plugin": refused(
    "installs and enables a Docker plugin, which runs its own process on the host with the privileges it asks for (grantAllPermissions, grantPermissions)",
  ),
  "docker:index/buildxBuilder:BuildxBuilder": refused(
    "starts a BuildKit builder (its docker-container driver runs the builder privileged), whose builds no rule reads",
  ),
  "docker:index/image:Image": refused(
    "builds an image: the build's RUN steps run in containers no rule reads, with the build context, arguments and secrets of the deployer's machine",
  ),
  "docker:index/registryImage:RegistryImage": inert(
    "an image in a registry (pushed or read); it runs nothing",
  ),
  "docker:index/remoteImage:RemoteImage": inert("pulls an image onto the engine; it runs nothing"),
  "docker:index/secret:Secret": inert("a swarm secret: only swarm services, which are refused, read it"),
  "docker:index/serviceConfig:ServiceConfig": inert(
    "a swarm config: only swarm services, which are refused, read it",
  ),
  "docker:index/tag:Tag": inert("another name for an image; it runs nothing"),
  "docker-build:index:Image": refused(
    "builds an image with BuildKit: the RUN steps run in containers no rule reads, with the deployer's contexts, secrets and SSH agent",
  ),
  "docker-build:index:Index": inert("an image index (a list of manifests) in a registry; it runs nothing"),
  "command:local:Command": refused("runs a command on the deployer's machine, outside every wall"),
  "command:remote:Command": refused("runs a command on a remote host over SSH, outside every wall"),
  "command:remote:CopyFile": refused("copies a file to a remote host over SSH, outside every wall"),
  "command:remote:CopyToRemote": refused(
    "copies files or folders to a remote host over SSH, outside every wall",
  ),
};

/** Why a provider resource type is refused, or undefined. */
export function refusedTypeReason(type: string): string | undefined {
  const v = PULUMI_TYPE_VERDICTS[type];
  return v !== undefined && Object.hasOwn(PULUMI_TYPE_VERDICTS, type) && v.v === "refused"
    ? v.why
    : undefined;
}
