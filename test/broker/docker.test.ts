/**
 * The secrets broker on the real Docker engine. Nothing here leaves the machine: the keyed "upstream" is a busybox
 * httpd that requires a Basic credential, on an `internal` network this test creates (198.18.9.0/24, RFC 2544
 * benchmarking space, which the broker does not refuse); a second server sits on a private range the broker must
 * refuse after resolving its name. Tasks run through the real launcher, on networks of their own that hold only the
 * task and the broker.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BROKER_IMAGE,
  type BrokerSpec,
  brokerSpec,
  brokerUnit,
  LABELS,
  launchSpec,
  type ResolvedProject,
  resolveProject,
  serviceUnitName,
} from "../../components/model";
import { judge } from "../../policy/rules/registry";
import { adaptLaunchSpec } from "../../policy/sources/docker/read";
import { brokerCreateBody, brokerCredentialEnvs, ensureBroker } from "../../runtime/broker";
import { demuxLogs } from "../../runtime/docker/client";
import { Launcher, type TaskResult } from "../../runtime/launcher";
import { Ledger } from "../../runtime/ledger";
import { meterOf } from "../../runtime/ledger/records";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { policyPreflight } from "../../runtime/preflight";
import { runEscape, runProbe } from "../../runtime/walls";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { internalNetwork, removeLabelled, requireImage, testServer } from "../helpers/test-servers";

const TEST_LABEL = "sandbox.test";
const OUTSIDE_SUBNET = "198.18.9.0/24";
const PRIVATE_SUBNET = "10.250.99.0/24";
const SECRET_USER = `u${Math.random().toString(36).slice(2, 10)}`;
const SECRET_PASS = `p${Math.random().toString(36).slice(2, 12)}`;
const CREDENTIAL = Buffer.from(`${SECRET_USER}:${SECRET_PASS}`).toString("base64");
const BODY = `the answer ${Math.random().toString(36).slice(2, 8)}`;

const name = `bk-${Math.random().toString(36).slice(2, 8)}`;
const project: ResolvedProject = resolveProject({
  name,
  budget: { monthlyCapUsd: 100 },
  jobRoot: mkdtempSync(join(tmpdir(), `${name}-jobs-`)),
  broker: {
    routes: {
      api: {
        upstream: "http://api.test",
        paths: ["/data/*"],
        credential: { secret: "apiToken", prefix: "Basic " },
        maxResponseBytes: 2000,
      },
      limited: {
        upstream: "http://api.test/data",
        paths: ["/answer.txt"],
        credential: { secret: "apiToken", prefix: "Basic " },
        rateLimit: { requests: 2, perSeconds: 60 },
      },
      other: {
        upstream: "http://other-api.test",
        paths: ["/data/*"],
        credential: { secret: "otherToken", prefix: "Basic " },
      },
      private: {
        upstream: "http://private-api.test",
        paths: ["/**"],
        credential: { secret: "privateToken" },
      },
    },
  },
  templates: {
    web: { image: TEST_IMAGE, timeoutSeconds: 90, broker: ["api", "limited", "private"] },
    other: { image: TEST_IMAGE, timeoutSeconds: 60, broker: ["other"] },
  },
});
const outsideNet = `${name}-outside`;
const privateNet = `${name}-private`;
const credentials = {
  SANDBOX_BROKER_CRED_API: CREDENTIAL,
  SANDBOX_BROKER_CRED_LIMITED: CREDENTIAL,
  SANDBOX_BROKER_CRED_OTHER: CREDENTIAL,
  SANDBOX_BROKER_CRED_PRIVATE: "private-token",
};

let docker: Dockerode;
let broker: BrokerSpec;
const launcher = () =>
  new Launcher(docker, {
    ledger: false,
    preflight: policyPreflight(),
    broker: (s) => ensureBroker(docker, broker, s.template, credentials, { egressNetwork: outsideNet }),
  });
/** Template web's own broker container (web calls api, limited and private). */
const webBroker = () => serviceUnitName(broker.name, "web");

/** Raw HTTP/1.0 requests to the broker, one after another, each answer after `=== id`. */
function requests(list: readonly { id: string; request: string }[]): string {
  return [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions
    'b="${SANDBOX_BROKER_URL#http://}"; bh="${b%%:*}"; bp="${b##*:}"',
    ...list.map(
      (r) =>
        `echo "=== ${r.id}"; printf '${r.request.replace(/%/g, "%%").replace(/\n/g, "\\r\\n")}' | nc -w 5 "$bh" "$bp" 2>&1; echo`,
    ),
  ].join("\n");
}

function answer(result: TaskResult, id: string): string {
  const at = result.stdout.indexOf(`=== ${id}\n`);
  if (at < 0) return "";
  const rest = result.stdout.slice(at + id.length + 5);
  const next = rest.indexOf("\n=== ");
  return next < 0 ? rest : rest.slice(0, next);
}

const get = (path: string, extra = "") => `GET ${path} HTTP/1.0\nHost: broker\n${extra}\n`;

const labels = { [TEST_LABEL]: "broker", [LABELS.project]: name };
const removeStale = () => removeLabelled(docker, `${TEST_LABEL}=broker`);

let privateServer: Dockerode.Container;

beforeAll(async () => {
  docker = await requireDocker();
  await requireImage(docker, BROKER_IMAGE, "toolchain/broker-image.sh");
  await removeStale();
  await internalNetwork(docker, outsideNet, OUTSIDE_SUBNET, labels);
  await internalNetwork(docker, privateNet, PRIVATE_SUBNET, labels);
  // The keyed upstream: /data needs the Basic credential; /admin is outside every route; big.txt is over the cap.
  await testServer(
    docker,
    outsideNet,
    ["api.test", "other-api.test"],
    [
      "mkdir -p /tmp/www/data /tmp/www/admin",
      `echo "${BODY}" > /tmp/www/data/answer.txt`,
      "echo admin > /tmp/www/admin/index.html",
      "i=0; while [ $i -lt 100 ]; do echo 0123456789012345678901234567890123456789; i=$((i+1)); done > /tmp/www/data/big.txt",
      `printf '/data:${SECRET_USER}:${SECRET_PASS}\\n' > /tmp/httpd.conf`,
      "exec httpd -f -vv -p 80 -h /tmp/www -c /tmp/httpd.conf",
    ].join(" && "),
    labels,
  );
  privateServer = await testServer(
    docker,
    privateNet,
    ["private-api.test"],
    "mkdir -p /tmp/www && echo private > /tmp/www/index.html && exec httpd -f -vv -p 80 -h /tmp/www",
    labels,
  );
  const spec = brokerSpec(project, `${name}-net`);
  if (spec === undefined) throw new Error("no broker");
  broker = spec;
  // Each template's own broker; web's (which calls the private route) may also reach the private server.
  await ensureBroker(docker, broker, "other", credentials, { egressNetwork: outsideNet });
  const web = await ensureBroker(docker, broker, "web", credentials, { egressNetwork: outsideNet });
  if (web === undefined) throw new Error("no broker for web");
  await docker.getNetwork(privateNet).connect({ Container: web.id });
}, 90_000);

afterAll(async () => {
  if (!docker) return;
  await offSwitch(docker, name);
  await removeStale();
});

describe("the broker container", () => {
  it("runs hardened: non-root, read-only root, every capability dropped, no-new-privileges, limits, no ports", async () => {
    const info = await docker.getContainer(webBroker()).inspect();
    expect(info.Config.User).toBe("10100:10100");
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.CapDrop).toEqual(["ALL"]);
    expect(info.HostConfig.SecurityOpt).toEqual(["no-new-privileges:true"]);
    expect(info.HostConfig.Memory).toBe(128 * 1024 * 1024);
    expect(info.HostConfig.PidsLimit).toBe(64);
    expect(info.HostConfig.PortBindings ?? {}).toEqual({});
    expect(info.Config.Labels?.[LABELS.role]).toBe("broker");
  });

  it("passes every mandatory rule of the pack, its credentials included (it is the genuine broker)", async () => {
    const unit = brokerUnit(broker, "web");
    if (unit === undefined) throw new Error("no broker for web");
    // Web's own broker holds only the credentials of web's routes.
    expect(unit.credentials.map((c) => c.route)).toEqual(["api", "limited", "private"]);
    const body = brokerCreateBody(unit, brokerCredentialEnvs(unit, credentials), outsideNet);
    const findings = judge(adaptLaunchSpec(body, `${name}/broker`), undefined, {})
      .filter(({ rule }) => rule.enforcementLevel !== "advisory")
      .flatMap(({ rule, findings }) => findings.map((f) => `${rule.id}: ${f.message}`));
    expect(findings).toEqual([]);
    // The same credentials in any other container are refused: another image, or a command of its own.
    for (const other of [
      { ...body, Image: TEST_IMAGE },
      { ...body, Cmd: ["sh", "-c", "env"] },
    ]) {
      const refused = judge(adaptLaunchSpec(other, `${name}/not-broker`), undefined, {}).flatMap(
        ({ rule, findings }) => findings.map((f) => `${rule.id}: ${f.message}`),
      );
      expect(
        refused.some((f) => f.startsWith("sandbox-disallow-secret-env:")),
        refused.join("\n"),
      ).toBe(true);
    }
  });
});

describe("a task that calls the broker", () => {
  let result: TaskResult;
  let brokerLog: string;
  beforeAll(async () => {
    result = await launcher().run(launchSpec(project, "web", `${name}-net`), {
      command: [
        "sh",
        "-c",
        [
          'echo "=== env"; env | sort',
          requests([
            { id: "answer", request: get("/api/data/answer.txt") },
            {
              id: "ownCredential",
              request: get("/api/data/answer.txt", "Authorization: nope\n"),
            },
            {
              id: "method",
              request: "POST /api/data/answer.txt HTTP/1.0\nHost: broker\nContent-Length: 0\n\n",
            },
            { id: "outside", request: get("/api/admin/") },
            { id: "dotdot", request: get("/api/data/../admin/") },
            { id: "encoded", request: get("/api/data/..%2fadmin%2f") },
            { id: "absolute", request: "GET http://api.test/data/answer.txt HTTP/1.0\nHost: api.test\n\n" },
            { id: "noRoute", request: get("/nosuch/data/answer.txt") },
            { id: "otherTemplate", request: get("/other/data/answer.txt") },
            { id: "cap", request: get("/api/data/big.txt") },
            { id: "private", request: get("/private/") },
            { id: "limited1", request: get("/limited/answer.txt") },
            { id: "limited2", request: get("/limited/answer.txt") },
            { id: "limited3", request: get("/limited/answer.txt") },
          ]),
          'echo "=== direct"; wget -q -T 3 -O- http://api.test/data/answer.txt 2>&1; echo "rc=$?"',
        ].join("\n"),
      ],
      removeJobDir: true,
    });
    brokerLog = demuxLogs(
      (await docker.getContainer(webBroker()).logs({ stdout: true, stderr: true })) as Buffer,
    ).stdout;
  }, 120_000);

  it("gets the keyed upstream's answer without ever holding the credential (the broker adds it, replacing the task's own)", async () => {
    expect(answer(result, "answer")).toMatch(/^HTTP\/1\.[01] 200/);
    expect(answer(result, "answer")).toContain(BODY);
    expect(answer(result, "ownCredential")).toMatch(/^HTTP\/1\.[01] 200/);
    expect(answer(result, "env")).toContain(`SANDBOX_BROKER_URL=http://${name}-broker:`);
    expect(answer(result, "env")).not.toContain("SANDBOX_BROKER_CRED");
  });

  it("is refused a method, a path outside the route, dot segments in any spelling, and an absolute URL", async () => {
    expect(answer(result, "method"), "method").toMatch(/^HTTP\/1\.[01] 405/);
    expect(answer(result, "outside"), "outside").toMatch(/^HTTP\/1\.[01] 403/);
    expect(answer(result, "dotdot"), "dotdot").toMatch(/^HTTP\/1\.[01] 400/);
    expect(answer(result, "encoded"), "encoded").toMatch(/^HTTP\/1\.[01] 400/);
    expect(answer(result, "absolute"), "absolute").toMatch(/^HTTP\/1\.[01] 400/);
    for (const id of ["outside", "dotdot", "encoded", "absolute"])
      expect(answer(result, id)).not.toContain("admin\n");
  });

  it("reaches only its own template's routes: an unknown route and another template's are not found", async () => {
    expect(answer(result, "noRoute")).toMatch(/^HTTP\/1\.[01] 404/);
    expect(answer(result, "otherTemplate")).toMatch(/^HTTP\/1\.[01] 404/);
  });

  it("is refused a response above the route's size cap, and calls past the route's rate", async () => {
    expect(answer(result, "cap")).toMatch(/^HTTP\/1\.[01] 502/);
    expect(answer(result, "limited1")).toMatch(/^HTTP\/1\.[01] 200/);
    expect(answer(result, "limited2")).toMatch(/^HTTP\/1\.[01] 200/);
    expect(answer(result, "limited3")).toMatch(/^HTTP\/1\.[01] 429/);
  });

  it("is refused an upstream whose name resolves to a private address, which never sees a request", async () => {
    expect(answer(result, "private")).toMatch(/^HTTP\/1\.[01] 403/);
    const logs = demuxLogs((await privateServer.logs({ stdout: true, stderr: true })) as Buffer);
    expect(`${logs.stdout}${logs.stderr}`).not.toMatch(/GET|url:/);
  });

  it("cannot reach the upstream directly: its network holds only the broker", async () => {
    expect(answer(result, "direct")).toMatch(/rc=[1-9]/);
    expect(answer(result, "direct")).not.toContain(BODY);
  });

  it("has every call in its result and the broker's log, and the credential in neither, nor in its output", async () => {
    const calls = result.broker?.calls ?? [];
    expect(calls.map((c) => `${c.route} ${c.method} ${c.path} ${c.status}`)).toEqual(
      expect.arrayContaining([
        "api GET /api/data/answer.txt 200",
        "api POST /api/data/answer.txt 405",
        "api GET /api/admin/ 403",
        "other GET /other/data/answer.txt 404",
        "private GET /private/ 403",
        "limited GET /limited/answer.txt 429",
      ]),
    );
    for (const text of [result.stdout, result.stderr, JSON.stringify(result), brokerLog]) {
      for (const secret of [CREDENTIAL, SECRET_PASS, "private-token"]) expect(text).not.toContain(secret);
    }
  });
});

describe("another template's task", () => {
  it("calls its own route on its own port, and not the first template's", async () => {
    const result = await launcher().run(launchSpec(project, "other", `${name}-net`), {
      command: [
        "sh",
        "-c",
        requests([
          { id: "own", request: get("/other/data/answer.txt") },
          { id: "notOwn", request: get("/api/data/answer.txt") },
        ]),
      ],
      removeJobDir: true,
    });
    expect(answer(result, "own")).toContain(BODY);
    expect(answer(result, "notOwn")).toMatch(/^HTTP\/1\.[01] 404/);
  }, 60_000);

  it("cannot call the first template's routes by choosing the first template's port (it answers web's tasks)", async () => {
    const webPort = broker.listeners.find((l) => l.template === "web")?.port;
    const call = (port: number | undefined) =>
      `{ printf 'GET /api/data/answer.txt HTTP/1.0\\r\\nHost: broker\\r\\n\\r\\n'; sleep 1; } | nc -w 3 ${name}-broker ${port} 2>&1; echo`;
    // The control: on web's task network, web's port answers with the keyed upstream's body.
    const own = await launcher().run(launchSpec(project, "web", `${name}-net`), {
      command: ["sh", "-c", call(webPort)],
      removeJobDir: true,
    });
    expect(own.stdout).toContain(BODY);
    const crossed = await launcher().run(launchSpec(project, "other", `${name}-net`), {
      command: ["sh", "-c", call(webPort)],
      removeJobDir: true,
    });
    expect(crossed.stdout).not.toContain("HTTP/");
    expect(crossed.stdout).not.toContain(BODY);
    expect(crossed.broker?.calls).toEqual([]);
  }, 90_000);
});

describe("the run's record in the ledger", () => {
  it("holds every broker call of the run and no credential", async () => {
    const ledger = Ledger.open(
      join(mkdtempSync(join(tmpdir(), `${name}-ledger-`)), "l.sqlite"),
      meterOf(project),
      {
        sinks: [],
      },
    );
    try {
      const withLedger = new Launcher(docker, {
        preflight: policyPreflight(),
        ledger,
        broker: (s) => ensureBroker(docker, broker, s.template, credentials, { egressNetwork: outsideNet }),
      });
      const r = await withLedger.run(launchSpec(project, "web", `${name}-net`), {
        command: [
          "sh",
          "-c",
          requests([
            { id: "a", request: get("/api/data/answer.txt") },
            { id: "b", request: get("/api/admin/") },
          ]),
        ],
        removeJobDir: true,
      });
      const run = await ledger.run(r.id);
      expect(
        (run?.broker ?? []).map((c) => {
          const call = c as { route: string; method: string; path: string; status: number };
          return `${call.route} ${call.method} ${call.path} ${call.status}`;
        }),
      ).toEqual(["api GET /api/data/answer.txt 200", "api GET /api/admin/ 403"]);
      expect(run?.broker.map((c) => (c as { refused: boolean }).refused)).toEqual([false, true]);
      expect(JSON.stringify(run)).not.toContain(CREDENTIAL);
      // The broker's refusal is an escape signal: an alert names the call.
      const alerts = (await ledger.alerts({ kind: "broker-refused" })).filter((a) => a.runId === r.id);
      expect(alerts.map((a) => a.message)).toEqual([
        `run ${r.id} (template web): the broker refused GET /api/admin/ (403)`,
      ]);
    } finally {
      await ledger.close();
    }
  }, 60_000);
});

describe("the probe and the escape checks", () => {
  it("the probe finds no credential in the task, the broker's refusals, and no direct way to the upstream", async () => {
    const t = project.spec.templates.web;
    if (t === undefined) throw new Error("no template");
    const { report, result } = await runProbe(launcher(), launchSpec(project, "web", `${name}-net`), t);
    const broker = report.walls.filter((w) => w.wall.startsWith("broker"));
    expect(broker.map((w) => `${w.wall} ${w.observed} ${w.ok}`)).toEqual([
      "brokerCredentials absent true",
      "brokerUnknownRoute 404 true",
      "brokerOutsidePath 403 true",
      "brokerTraversal 400 true",
      "brokerDirect denied true",
    ]);
    expect(report.passed, JSON.stringify(report.walls)).toBe(true);
    expect(result.stdout).not.toContain(CREDENTIAL);
  }, 90_000);

  it("the environment escape, with its broker case, is blocked and leaves nothing", async () => {
    const r = await runEscape(
      launcher(),
      docker,
      launchSpec(project, "web", `${name}-net`),
      "exfiltrate-env",
    );
    expect(r.blocked, r.evidence).toBe(true);
    expect(r.evidence).toContain(
      "broker: credential variables in the task 0, direct call to api.test:80 no answer",
    );
    expect(r.evidence).toMatch(/encoded dot segment HTTP\/1\.[01] 400/);
    expect(r.leftovers).toEqual([]);
  }, 60_000);
});

describe("a changed credential", () => {
  it("replaces the broker; the same one keeps it", async () => {
    const before = (await docker.getContainer(webBroker()).inspect()).Id;
    await ensureBroker(docker, broker, "web", credentials, { egressNetwork: outsideNet });
    expect((await docker.getContainer(webBroker()).inspect()).Id).toBe(before);
    const changed = { ...credentials, SANDBOX_BROKER_CRED_PRIVATE: "another-token" };
    await ensureBroker(docker, broker, "web", changed, { egressNetwork: outsideNet });
    const after = await docker.getContainer(webBroker()).inspect();
    expect(after.Id).not.toBe(before);
    expect(after.Config.Env).toContain("SANDBOX_BROKER_CRED_PRIVATE=another-token");
    await ensureBroker(docker, broker, "web", credentials, { egressNetwork: outsideNet });
    await docker.getNetwork(privateNet).connect({ Container: webBroker() });
  }, 60_000);
});

describe("the off switch", () => {
  it("removes the broker with the rest of the project", async () => {
    await offSwitch(docker, name);
    const left = await projectLeftovers(docker, name);
    expect(left).toEqual([]);
  }, 60_000);
});
