/**
 * Host paths that hand over the host user's credentials (policy/paths-credentials.ts): agent sockets, display
 * sockets and the tools' credential folders, judged the same in every format (Engine body, Compose, a pod's hostPath,
 * the pack's docker.Container) and every spelling the kernel resolves to the same path; a folder beside them passes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DOCKER, safeContainer } from "../policy/fixtures";
import { validate, violated } from "../policy/harness";
import { compose, engineBody, pod } from "./fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "./harness";

const SENSITIVE = "sandbox-disallow-sensitive-host-mounts";

async function everyFormat(path: string, want: ReturnType<typeof blocked> | typeof passes): Promise<void> {
  assertVerdict(await scanFiles({ "create.json": engineBody({}, { Binds: [`${path}:/h:ro`] }) }), want);
  assertVerdict(await scanFiles({ "compose.yaml": compose("app", `volumes: ["${path}:/h:ro"]`) }), want);
  const k8s = pod("p", {
    container: "volumeMounts: [{name: h, mountPath: /h, readOnly: true}]",
    spec: `volumes: [{name: h, hostPath: {path: "${path}"}}]`,
  });
  assertVerdict(await scanFiles({ "pod.yaml": k8s }), want);
  const mounts = [{ type: "bind", source: path, target: "/h", readOnly: true }];
  const found = violated(validate(DOCKER, { ...safeContainer(), mounts }));
  if (want.verdict === "passes") expect(found).not.toContain(SENSITIVE);
  else expect(found).toContain(SENSITIVE);
}

/** Spellings the kernel resolves to the same path: doubled and dot segments, a trailing slash. */
const spell = (p: string) =>
  fc.constantFrom(
    p,
    p.replace(/^\//, "//"),
    `${p}/`,
    p.replace(/\/([^/]+)$/, "/./$1"),
    p.replace(/^\/(\w+)/, "/$1/../$1"),
  );

const HOMES = ["/root", "/home/dev", "/Users/dev", "/var/home/dev"];
const IN_HOME = [
  ".ssh",
  ".ssh/id_ed25519",
  ".gnupg",
  ".kube/config",
  ".aws/credentials",
  ".config/gcloud",
  ".azure",
  ".pulumi",
  ".docker/config.json",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".vault-token",
];
const SOCKETS = [
  "/tmp/ssh-AbCdEf/agent.42",
  "/tmp/.X11-unix",
  "/tmp/.X11-unix/X0",
  "/run/user/1000/gnupg/S.gpg-agent",
  "/run/user/1000/keyring/ssh",
  "/run/user/1000/wayland-0",
  "/run/host-services/ssh-auth.sock",
];

describe("host paths that hand over a credential (generated)", () => {
  it("every credential folder under every kind of home, in every spelling and format", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(fc.constantFrom(...HOMES), fc.constantFrom(...IN_HOME))
          .chain(([h, c]) => spell(`${h}/${c}`)),
        async (path) => {
          await everyFormat(path, blocked(SENSITIVE));
        },
      ),
      { numRuns: 15 },
    );
  });

  it("every agent and display socket, in every spelling and format", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SOCKETS).chain(spell), async (path) => {
        await everyFormat(path, blocked(SENSITIVE));
      }),
      { numRuns: 12 },
    );
  });

  it("a folder beside them holds no credential and passes (no false denial)", async () => {
    for (const path of [
      "/home/dev/work/job",
      "/tmp/jobs/1",
      "/srv/data/.sshd-notes",
      "/home/dev/.cache-project",
    ])
      await everyFormat(path, passes);
  });
});
