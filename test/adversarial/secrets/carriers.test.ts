/**
 * Attacker D: secrets beyond env and the Pulumi Docker types. Each finding's input (F1-F14 of the report),
 * scanned as a user would, with its plain spelling where one exists; the docker.Container and Pod cases also through
 * the pack (remediation, then validation, as the engine runs it), which must agree with `scan`.
 */
import { describe, expect, it } from "vitest";
import { DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../../policy/fixtures";
import { engineRun, secret, validateStack, violated } from "../../policy/harness";
import { DECLARED_ARGS } from "../../scan/helpers";
import { compose, engineBody, pod } from "../fixtures";
import { assertVerdict, blocked, cases, type Files, passes, scanFiles } from "../harness";

const SECRET_ENV = "sandbox-disallow-secret-env";
const SOCKET = "sandbox-disallow-runtime-socket";
const VOLUME = "docker:index/volume:Volume";
const POD = "kubernetes:core/v1:Pod";
const PEM =
  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n";

/** A `pulumi preview --json` with one create step per resource. */
function preview(...resources: { type: string; name: string; inputs: Record<string, unknown> }[]): Files {
  const steps = resources.map((r) => {
    const urn = `urn:pulumi:dev::app::${r.type}::${r.name}`;
    return {
      op: "create",
      urn,
      provider: "",
      newState: { urn, custom: true, type: r.type, inputs: r.inputs, outputs: {} },
    };
  });
  return { "preview.json": JSON.stringify({ config: {}, steps, changeSummary: { create: steps.length } }) };
}

const container = (extra: Record<string, unknown>) => ({ ...safeContainer(), ...extra });
const containerPreview = (extra: Record<string, unknown>) =>
  preview({ type: DOCKER, name: "task", inputs: container(extra) });
const envPod = (name: string, value: string) =>
  pod("p", { container: `env:\n  - name: ${name}\n    value: ${JSON.stringify(value)}` });
const B = blocked(SECRET_ENV);
const SENSITIVE = "sandbox-disallow-sensitive-host-mounts";
const plainCommandPod = { "pod.yaml": pod("p", { container: 'args: ["--password=hunter2xx"]' }) };

/** The pack's verdict on one resource, as the engine runs it (remediation first). */
const pack = (type: string, props: object) => violated(engineRun(type, props).outcome);

describe("F1/F2: a Docker volume whose local driver binds a host folder", () => {
  const driverOptions = { type: "none", o: "bind", device: "/var/run" };
  const mount = { type: "volume", target: "/host", volumeOptions: { driverName: "local", driverOptions } };

  it("F1 mounts[].volumeOptions.driverOptions is that host folder, in scan and the pack", async () => {
    const extra = { mounts: [...(safeContainer().mounts as object[]), mount] };
    assertVerdict(await scanFiles(containerPreview(extra)), blocked(SOCKET));
    assertVerdict(
      await scanFiles(containerPreview({ mounts: [{ type: "bind", source: "/var/run", target: "/host" }] })),
      blocked(SOCKET),
    );
    expect(pack(DOCKER, container(extra))).toContain(SOCKET);
  });

  it("F1 local options that bind nothing are not host folders", async () => {
    const volumeOptions = {
      driverName: "local",
      driverOptions: { type: "tmpfs", device: "tmpfs", o: "size=64m" },
    };
    const extra = { mounts: [...(safeContainer().mounts as object[]), { ...mount, volumeOptions }] };
    // The fixture's job folder lies under the job root the pack config declares.
    assertVerdict(await scanFiles(containerPreview(extra), DECLARED_ARGS), passes);
    expect(pack(DOCKER, container(extra))).toEqual([]);
  });

  it("F1 a driver other than local is a plugin that mounts what its options say: it fails closed", async () => {
    const volumeOptions = { driverName: "rexray", driverOptions };
    const extra = { mounts: [...(safeContainer().mounts as object[]), { ...mount, volumeOptions }] };
    assertVerdict(await scanFiles(containerPreview(extra)), blocked(SENSITIVE));
    expect(pack(DOCKER, container(extra))).toContain(SENSITIVE);
  });

  const volume = { name: "hostrun", driver: "local", driverOpts: driverOptions };
  const byName = [
    { volumes: [{ volumeName: "hostrun", containerPath: "/host" }] },
    {
      mounts: [
        ...(safeContainer().mounts as object[]),
        { type: "volume", source: "hostrun", target: "/host" },
      ],
    },
  ];

  it("F2 a container mounting a docker.Volume by name is judged as binding its host folder", async () => {
    for (const extra of byName) {
      const r = await scanFiles(
        preview(
          { type: VOLUME, name: "hostrun", inputs: volume },
          { type: DOCKER, name: "task", inputs: container(extra) },
        ),
      );
      assertVerdict(r, blocked("sandbox-disallow-host-path-claims", "task"));
      expect(r.report.findings.some((f) => f.message.includes(SOCKET) && f.resource.name === "task")).toBe(
        true,
      );
      expect(r.report.skipped.map((s) => s.kind)).not.toContain("Volume");
      const o = validateStack([
        { type: VOLUME, name: "hostrun", props: volume },
        { type: DOCKER, name: "task", props: container(extra) },
      ]);
      expect(o.violations.filter((v) => v.message.includes(SOCKET)).length).toBeGreaterThan(0);
    }
  });

  it("F2 a volume whose name the daemon generates is linked by what the container's list was computed from", () => {
    const unnamed = { driver: "local", driverOpts: driverOptions };
    const o = validateStack([
      { type: VOLUME, name: "hostrun", props: unnamed },
      {
        type: DOCKER,
        name: "task",
        props: container({
          volumes: [{ volumeName: "04da6b54-80e4-46f7-96ec-b56ff0331ba9", containerPath: "/h" }],
        }),
        dependsOn: { volumes: ["hostrun"] },
      },
    ]);
    expect(o.violations.filter((v) => v.message.includes(SOCKET)).length).toBeGreaterThan(0);
  });

  it("F2 a tmpfs-backed docker.Volume (the project's own probe volume) passes", () => {
    const tmpfs = {
      name: "job",
      driver: "local",
      driverOpts: { type: "tmpfs", device: "tmpfs", o: "size=64m" },
    };
    const o = validateStack([
      { type: VOLUME, name: "job", props: tmpfs },
      {
        type: DOCKER,
        name: "task",
        props: container({ volumes: [{ volumeName: "job", containerPath: "/j" }] }),
      },
    ]);
    expect(o.violations.filter((v) => v.policy === "sandbox-disallow-host-path-claims")).toEqual([]);
  });
});

describe("F3: a Pulumi secret under a map key named env is not an environment", () => {
  const props = (key: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "task", annotations: { [key]: secret("hunter2") } },
    spec: {
      ...safePodSpec(),
      containers: [
        {
          ...safeK8sContainer(),
          env: [{ name: "X", valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${key}']` } } }],
        },
      ],
    },
  });
  it("the pack blocks it whatever the key's name, as scan does", async () => {
    for (const key of ["env", "tok", "Env"]) expect(pack(POD, props(key)).length, key).toBeGreaterThan(0);
    const inputs = JSON.parse(JSON.stringify(props("env")).replace(/\{"4dabf[^}]*\}/, '"[secret]"'));
    assertVerdict(await scanFiles(preview({ type: POD, name: "task", inputs })), blocked());
  });
  it("a secret in a container's own env still gets the secret-env finding (not only readable-values)", () => {
    const p = props("env");
    (p.spec.containers[0] as Record<string, unknown>).env = [{ name: "X", value: secret("hunter2") }];
    expect(pack(POD, p)).toContain(SECRET_ENV);
  });
});

const downwardVolume = (volume: string) =>
  pod("p", {
    top: "  annotations: {tok: ghp_0123456789abcdefghijABCDEFGHIJ012345}\n  labels: {app: x}",
    container: "volumeMounts: [{name: d, mountPath: /etc/podinfo, readOnly: true}]",
    spec: `volumes:\n  - name: d\n${volume}`,
  });

cases("F4: downward-API files of annotations and labels", [
  ...[
    "    downwardAPI: {items: [{path: tok, fieldRef: {fieldPath: \"metadata.annotations['tok']\"}}]}",
    "    downwardAPI: {items: [{path: all, fieldRef: {fieldPath: metadata.annotations}}]}",
    "    projected: {sources: [{downwardAPI: {items: [{path: t, fieldRef: {fieldPath: \"metadata.annotations['tok']\"}}]}}]}",
  ].map((v) => ({
    name: `a downwardAPI file: ${v.trim().slice(0, 60)}`,
    files: { "pod.yaml": downwardVolume(v) },
    plain: {
      "pod.yaml": pod("p", {
        top: "  annotations: {tok: ghp_0123456789abcdefghijABCDEFGHIJ012345}",
        container:
          "env:\n  - name: X\n    valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['tok']\"}}",
      }),
    },
    want: B,
  })),
  {
    name: "a downwardAPI file of the labels (no credential in them) and of the pod's name passes",
    files: {
      "pod.yaml": downwardVolume(
        "    downwardAPI: {items: [{path: l, fieldRef: {fieldPath: metadata.labels}}, {path: n, fieldRef: {fieldPath: metadata.name}}]}",
      ),
    },
    want: passes,
  },
]);

const probe = (handler: string) => pod("p", { container: handler });
cases("F5: what the kubelet or daemon runs in, or sends to, the container", [
  {
    name: "an exec liveness probe with mysqladmin -p<password>",
    files: {
      "pod.yaml": probe("livenessProbe: {exec: {command: [sh, -c, 'mysqladmin -uroot -phunter2xx ping']}}"),
    },
    plain: { "pod.yaml": pod("p", { container: "args: [mysqladmin, -uroot, -phunter2xx, ping]" }) },
    want: B,
  },
  {
    name: "a postStart exec hook with mysql -p<password>",
    files: { "pod.yaml": probe("lifecycle: {postStart: {exec: {command: [mysql, -uroot, -phunter2xx]}}}") },
    plain: plainCommandPod,
    want: B,
  },
  {
    name: "an httpGet probe header Authorization: Bearer <token>",
    files: {
      "pod.yaml": probe(
        "readinessProbe: {httpGet: {path: /, port: 8080, httpHeaders: [{name: Authorization, value: 'Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345'}]}}",
      ),
    },
    plain: plainCommandPod,
    want: B,
  },
  {
    name: "a Compose healthcheck (list and string forms)",
    files: {
      "compose.yaml": compose(
        "app",
        'healthcheck: {test: ["CMD", "mysqladmin", "-uroot", "-phunter2xx", "ping"]}',
      ),
    },
    plain: { "compose.yaml": compose("app", 'environment: ["DB_PASSWORD=hunter2xx"]') },
    want: B,
  },
  {
    name: "a Compose healthcheck as a shell string",
    files: { "compose.yaml": compose("app", 'healthcheck: {test: "mysqladmin -uroot -phunter2xx ping"}') },
    want: B,
  },
  {
    name: "an Engine body's Healthcheck.Test (CMD-SHELL)",
    files: {
      "body.json": engineBody({ Healthcheck: { Test: ["CMD-SHELL", "curl -u admin:hunter2xx localhost"] } }),
    },
    want: B,
  },
  {
    name: "plain probes and healthchecks pass",
    files: {
      "pod.yaml": probe(
        "livenessProbe: {exec: {command: [cat, /tmp/healthy]}}\nreadinessProbe: {httpGet: {path: /, port: 8080, httpHeaders: [{name: Accept, value: application/json}]}}",
      ),
      "compose.yaml": compose("app", 'healthcheck: {test: ["CMD", "wget", "-q", "--spider", "localhost"]}'),
    },
    want: passes,
  },
]);

describe("F5/F6: docker.Container healthchecks and uploads, in scan and the pack", () => {
  const bad = [
    { healthcheck: { tests: ["CMD", "mysqladmin", "-uroot", "-phunter2xx", "ping"] } },
    { uploads: [{ file: "/home/app/.ssh/id_ed25519", content: PEM }] },
    { uploads: [{ file: "/home/app/.ssh/id_ed25519", contentBase64: Buffer.from(PEM).toString("base64") }] },
    { uploads: [{ file: "/root/.netrc", content: "machine x login u password hunter2xx\n" }] },
  ];
  const good = [
    { healthcheck: { tests: ["CMD-SHELL", "wget -q --spider localhost || exit 1"] } },
    { uploads: [{ file: "/etc/app.conf", content: "listen = 8080\nlog = info\n" }] },
  ];
  it("each is blocked by both", async () => {
    for (const extra of bad) {
      assertVerdict(await scanFiles(containerPreview(extra)), B);
      expect(pack(DOCKER, container(extra)), JSON.stringify(extra)).toContain(SECRET_ENV);
    }
  });
  it("their safe counterparts pass both", async () => {
    for (const extra of good) {
      assertVerdict(await scanFiles(containerPreview(extra), DECLARED_ARGS), passes);
      expect(pack(DOCKER, container(extra))).toEqual([]);
    }
  });
});

cases("F7: Compose secrets reach the task at /run/secrets", [
  {
    name: "a file-sourced secret",
    files: {
      "compose.yaml": compose(
        "app",
        "secrets: [db_password]",
        "secrets:\n  db_password: {file: ./db_password.txt}",
      ),
      "db_password.txt": "hunter2xx\n",
    },
    plain: {
      "pod.yaml": pod("p", {
        container: "volumeMounts: [{name: s, mountPath: /etc/creds, readOnly: true}]",
        spec: "volumes:\n  - name: s\n    secret: {secretName: db}",
      }),
    },
    want: B,
  },
  {
    name: "an environment-sourced secret",
    files: {
      "compose.yaml": compose(
        "app",
        "secrets: [{source: tok, target: token}]",
        "secrets:\n  tok: {environment: TOKEN}",
      ),
    },
    want: B,
  },
  {
    name: "a config (not a secret) passes",
    files: {
      "compose.yaml": compose("app", "configs: [app]", "configs:\n  app: {file: ./app.conf}"),
      "app.conf": "x=1\n",
    },
    want: passes,
  },
]);

describe("F8-F14: the same spellings through the pack's docker.Container and scan", () => {
  const blockedEnvs = [
    "SSHPASS=hunter2-correct-horse",
    "RABBITMQ_ERLANG_COOKIE=hunter2-correct-horse",
    "LDAP_BIND_PW=hunter2xx",
    "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%204f9a8b7c6d5e4f3a2b1c",
    "DATABASE_DSN=app:hunter2xx@tcp(db:3306)/app",
    'SPRING_APPLICATION_JSON={"spring.datasource.password":"hunter2xx"}',
  ];
  const passingEnvs = [
    "GIT_SSH_COMMAND=ssh -o PasswordAuthentication=no",
    "KAFKA_OPTS=-Djava.security.auth.login.config=/etc/kafka/jaas.conf",
    "CONTEXT_TOKENS=8192",
    "TOKENS_PER_MINUTE=90000",
    "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/key.json",
    "SSH_AUTH_SOCK=/run/ssh-agent.sock",
    "SSH_KNOWN_HOSTS=github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    "SSH_KEY_FINGERPRINT=SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU",
  ];
  const withEnv = (e: string) => ({ envs: [...(safeContainer().envs as string[]), e] });
  it("credentials are blocked by both", async () => {
    for (const e of blockedEnvs) {
      expect(pack(DOCKER, container(withEnv(e))), e).toContain(SECRET_ENV);
      const [name = "", ...rest] = e.split("=");
      assertVerdict(await scanFiles({ "pod.yaml": envPod(name, rest.join("=")) }), B);
    }
  });
  it("the false alarms pass both", async () => {
    for (const e of passingEnvs) {
      expect(pack(DOCKER, container(withEnv(e))), e).toEqual([]);
      const [name = "", ...rest] = e.split("=");
      assertVerdict(await scanFiles({ "pod.yaml": envPod(name, rest.join("=")) }), passes);
    }
    assertVerdict(
      await scanFiles({
        "pod.yaml": pod("p", {
          container:
            'args: [ssh, -o, PasswordAuthentication=no, git@github.com, "&&", gpg, --recv-keys, ABCDEF0123456789ABCDEF]',
        }),
      }),
      passes,
    );
  });
});
