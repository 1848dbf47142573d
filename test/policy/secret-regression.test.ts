/**
 * Real-world styles with their expected verdicts: environments from public docker-compose examples (official image
 * docs), Kubernetes Secret volumes and the downward API, and the platforms' seccomp and capability baselines.
 */
import { describe, expect, it } from "vitest";
import { judge } from "../../policy/rules/registry";
import { composeServiceToContainerProps } from "../../policy/sources/compose/service-props";
import { adaptResource } from "../../policy/sources/subject";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec } from "./fixtures";
import { DECLARED } from "./harness";
import { envInputs, secretViolations } from "./secret-inputs";

const SECRET_ENV = "sandbox-disallow-secret-env";

/** Violations (rule: message) of the whole pack on one resource. */
function violations(
  type: string,
  props: unknown,
  config: Readonly<Record<string, object>> = DECLARED,
): string[] {
  const subject = adaptResource(type, props, "fixture");
  if (subject === undefined) throw new Error("not adapted");
  return judge(subject, undefined, config).flatMap((r) =>
    r.findings
      .filter((f) => f.unchecked !== true)
      .map((f) => `${r.rule.id}: ${f.message}${f.path ? ` [${f.path}]` : ""}`),
  );
}

describe("environments from public compose examples", () => {
  it.each([
    ["POSTGRES_PASSWORD", "example", true],
    ["POSTGRES_PASSWORD_FILE", "/run/secrets/postgres-passwd", false],
    ["POSTGRES_HOST_AUTH_METHOD", "trust", false],
    ["POSTGRES_USER", "app", false],
    ["MYSQL_ROOT_PASSWORD", "example", true],
    ["MYSQL_ALLOW_EMPTY_PASSWORD", "yes", false],
    ["MYSQL_RANDOM_ROOT_PASSWORD", "1", false],
    ["MYSQL_PWD", "example", true],
    ["WORDPRESS_DB_PASSWORD", "examplepass", true],
    ["WORDPRESS_DB_HOST", "db", false],
    ["MONGO_INITDB_ROOT_PASSWORD", "example", true],
    ["ME_CONFIG_MONGODB_URL", "mongodb://root:example@mongo:27017/", true],
    ["ME_CONFIG_BASICAUTH", "false", false],
    ["RABBITMQ_DEFAULT_PASS", "guest2", true],
    ["GF_SECURITY_ADMIN_PASSWORD__FILE", "/run/secrets/admin_password", false],
    ["MINIO_ROOT_PASSWORD", "minioadmin", true],
    ["N8N_ENCRYPTION_KEY", "some-long-random-string", true],
    ["NEXTAUTH_URL", "http://localhost:3000", false],
    ["NEXTAUTH_SECRET", "changeme", true],
    ["OPENAI_API_BASE", "http://ollama:11434/v1", false],
    ["MAX_TOKENS", "4096", false],
    ["TOKENIZERS_PARALLELISM", "false", false],
    ["DATABASE_URL", "postgresql://app:app@db:5432/app", true],
    ["DATABASE_URL", "postgresql://db:5432/app", false],
    ["REDIS_URL", "redis://:s3cret@redis:6379", true],
    ["SECRET_KEY_BASE", "a1b2c3", true],
    ["KC_DB_PASSWORD", "password", true],
    ["NODE_ENV", "production", false],
    ["PUBLIC_KEY_URL", "https://keys.example/pub.pem", false],
  ])("%s=%s: refused %s", (name, value, refused) => {
    for (const input of envInputs(name, value))
      expect([input.carrier, secretViolations(input).length > 0]).toEqual([input.carrier, refused]);
  });

  it("names the variable and the reason, never the value", () => {
    const props = composeServiceToContainerProps("db", {
      image: "postgres:16",
      environment: { POSTGRES_PASSWORD: "example", DATABASE_URL: "postgres://u:hunter22@db/x" },
    });
    expect(violations(DOCKER, props).filter((v) => v.startsWith(SECRET_ENV))).toEqual([
      `${SECRET_ENV}: container "fixture" sets variable POSTGRES_PASSWORD: its name contains "PASSWORD", which says it holds a credential (the value is not shown) [envs[0]]`,
      `${SECRET_ENV}: container "fixture" sets variable DATABASE_URL: its value looks like a URL with a password in it (the value is not shown) [envs[1]]`,
    ]);
  });

  it("a command line with a password names the argument", () => {
    const c = copy(safeContainer());
    c.command = ["redis-server", "--requirepass", "s3cretpw1"];
    expect(violations(DOCKER, c)).toEqual([
      `${SECRET_ENV}: container "fixture" passes a credential on its command line: option --requirepass is given a credential (the value is not shown) [command[2]]`,
    ]);
  });
});

const JOB = carrier("Job");

function job(mutate: (spec: Record<string, unknown>) => void, podMeta?: Record<string, unknown>): string[] {
  const spec = copy(safePodSpec());
  mutate(spec);
  return violations(JOB.type, JOB.build(spec, podMeta)).filter((v) => v.startsWith(SECRET_ENV));
}

const C = "spec.template.spec.containers[0]";

describe("Kubernetes: secrets beyond env", () => {
  it("a Secret volume mounted into the task", () => {
    expect(
      job((s) => {
        (s.volumes as unknown[]).push({ name: "creds", secret: { secretName: "db" } });
        (first(s).volumeMounts as unknown[]).push({ name: "creds", mountPath: "/creds", readOnly: true });
      }),
    ).toEqual([
      `${SECRET_ENV}: container "task" mounts Secret volume "creds" at /creds [${C}.volumeMounts[2]]`,
    ]);
  });

  it("a projected Secret, and not a projected service-account token alone", () => {
    expect(
      job((s) => {
        (s.volumes as unknown[]).push(
          { name: "p", projected: { sources: [{ configMap: { name: "c" } }, { secret: { name: "s" } }] } },
          { name: "t", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } },
        );
        (first(s).volumeMounts as unknown[]).push(
          { name: "p", mountPath: "/p" },
          { name: "t", mountPath: "/t" },
        );
      }),
    ).toEqual([
      `${SECRET_ENV}: container "task" mounts projected volume "p" at /p, which holds a Secret [${C}.volumeMounts[2]]`,
    ]);
  });

  it("a Secrets Store CSI volume", () => {
    expect(
      job((s) => {
        (s.volumes as unknown[]).push({
          name: "vault",
          csi: { driver: "secrets-store.csi.k8s.io", readOnly: true },
        });
        (first(s).volumeMounts as unknown[]).push({ name: "vault", mountPath: "/mnt/secrets" });
      }),
    ).toEqual([
      `${SECRET_ENV}: container "task" mounts Secret volume "vault" at /mnt/secrets [${C}.volumeMounts[2]]`,
    ]);
  });

  const downward = (fieldPath: string) => (s: Record<string, unknown>) => {
    (first(s).env as unknown[]).push({ name: "SETTING", valueFrom: { fieldRef: { fieldPath } } });
  };
  const meta = {
    labels: { "sandbox.project": "demo", "sandbox.role": "task", tok: `ghp_${"a1B2".repeat(9)}` },
    annotations: { "example.com/token": `glpat-${"x1Y2".repeat(5)}`, "example.com/owner": "team-a" },
  };

  it.each([
    ["metadata.annotations['example.com/token']", "its value looks like a GitLab token"],
    ["metadata.annotations", "its value looks like a GitLab token"],
    ["metadata.labels['tok']", "its value looks like a GitHub token"],
  ])("a fieldRef to %s copies the credential in", (fieldPath, reason) => {
    expect(job(downward(fieldPath), meta)).toEqual([
      `${SECRET_ENV}: container "task" sets variable SETTING: ${reason} (the value is not shown) [${C}.env[2]]`,
    ]);
  });

  it.each([
    "metadata.annotations['example.com/owner']",
    "metadata.name",
    "status.podIP",
    "metadata.labels['missing']",
  ])("a fieldRef to %s is harmless", (fieldPath) => {
    expect(job(downward(fieldPath), meta)).toEqual([]);
  });

  it("a resourceFieldRef is harmless even under a credential name", () => {
    expect(
      job((s) => {
        (first(s).env as unknown[]).push({
          name: "TOKEN_BUDGET",
          valueFrom: { resourceFieldRef: { resource: "limits.cpu" } },
        });
        (first(s).env as unknown[]).push({
          name: "API_TOKEN",
          valueFrom: { resourceFieldRef: { resource: "limits.memory" } },
        });
      }),
    ).toEqual([]);
  });

  it("a ConfigMap key under a credential name is refused: the value cannot be seen", () => {
    expect(
      job((s) => {
        (first(s).env as unknown[]).push({
          name: "DB_PASSWORD",
          valueFrom: { configMapKeyRef: { name: "c", key: "pw" } },
        });
      }),
    ).toEqual([
      `${SECRET_ENV}: container "task" sets variable DB_PASSWORD: its name contains "PASSWORD", which says it holds a credential (the value is not shown) [${C}.env[2]]`,
    ]);
  });
});

const SECCOMP = "sandbox-disallow-unconfined-seccomp";
const ADDED = "sandbox-disallow-added-capabilities";

describe("platform baselines", () => {
  const noSeccomp = (s: Record<string, unknown>) => {
    delete (s.securityContext as Record<string, unknown>).seccompProfile;
    delete (first(s).securityContext as Record<string, unknown>).seccompProfile;
  };
  const pod = (
    mutate: (s: Record<string, unknown>) => void,
    podMeta?: Record<string, unknown>,
    config = {},
  ) => {
    const spec = copy(safePodSpec());
    mutate(spec);
    return violations(JOB.type, JOB.build(spec, podMeta), config).filter(
      (v) => v.startsWith(SECCOMP) || v.startsWith(ADDED),
    );
  };

  it("Kubernetes: an absent seccomp profile is Unconfined", () => {
    expect(pod(noSeccomp)).toEqual([
      `${SECCOMP}: container "task" sets no seccomp profile, so it runs Unconfined unless the kubelet enables seccompDefault (set seccompProfile RuntimeDefault or Localhost at pod or container level) [${C}]`,
    ]);
  });

  it("Kubernetes: the old annotation does not confine (ignored since v1.27)", () => {
    const meta = { annotations: { "seccomp.security.alpha.kubernetes.io/pod": "runtime/default" } };
    expect(pod(noSeccomp, meta)).toEqual([
      `${SECCOMP}: container "task" gets its seccomp profile only from the annotation seccomp.security.alpha.kubernetes.io/pod, which Kubernetes ignores since v1.27 (set securityContext.seccompProfile) [${C}]`,
    ]);
  });

  it.each([
    [
      "pod RuntimeDefault",
      (s: Record<string, unknown>) =>
        delete (first(s).securityContext as Record<string, unknown>).seccompProfile,
    ],
    [
      "container Localhost",
      (s: Record<string, unknown>) => {
        noSeccomp(s);
        (first(s).securityContext as Record<string, unknown>).seccompProfile = {
          type: "Localhost",
          localhostProfile: "p.json",
        };
      },
    ],
  ])("Kubernetes: %s confines", (_what, mutate) => {
    expect(pod(mutate)).toEqual([]);
  });

  it("requireExplicit: false accepts an absent profile (clusters with seccompDefault)", () => {
    expect(pod(noSeccomp, undefined, { [SECCOMP]: { requireExplicit: false } })).toEqual([]);
  });

  it("Docker: no seccomp option is the engine's default profile", () => {
    const c = copy(safeContainer());
    c.securityOpts = ["no-new-privileges:true"];
    expect(violations(DOCKER, c).filter((v) => v.startsWith(SECCOMP))).toEqual([]);
  });

  const adds = (add: string[]) => (s: Record<string, unknown>) => {
    (first(s).securityContext as Record<string, unknown>).capabilities = { drop: ["ALL"], add };
  };

  it.each([["NET_BIND_SERVICE"], ["net_bind_service"], ["CAP_NET_BIND_SERVICE"], [" Net_Bind_Service "]])(
    "adding only %s is allowed by default (PSA restricted)",
    (cap) => {
      expect(pod(adds([cap]))).toEqual([]);
      const c = copy(safeContainer());
      c.capabilities = { drops: ["ALL"], adds: [cap] };
      expect(violations(DOCKER, c).filter((v) => v.startsWith(ADDED))).toEqual([]);
    },
  );

  it("allowed: [] refuses NET_BIND_SERVICE too", () => {
    expect(pod(adds(["NET_BIND_SERVICE"]), undefined, { [ADDED]: { allowed: [] } })).toEqual([
      `${ADDED}: container "task" adds capabilities [NET_BIND_SERVICE] [${C}]`,
    ]);
  });

  it.each([["ALL"], ["SYS_ADMIN"], ["cap_net_raw"]])("adding %s is refused", (cap) => {
    expect(pod(adds(["NET_BIND_SERVICE", cap]))).toEqual([
      `${ADDED}: container "task" adds capabilities [${cap}] [${C}]`,
    ]);
  });
});
