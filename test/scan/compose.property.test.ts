// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Compose interpolation is written as `${VAR}` in plain strings.
// Generated Compose projects: the loader against compose-go itself (the oracle loads each project exactly as
// `docker compose config` does), and verdicts over equivalent spellings of the same dangerous (or safe) setting.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadComposeProject } from "../../policy/sources/compose/load";
import { runOracle } from "../helpers/goOracle";
import { composeFile, HARDENED, PROJECT, type Project, service, verdicts } from "./compose-helpers";

// A fixed seed keeps runs reproducible; COMPOSE_SEED explores others.
const SEED = Number(process.env.COMPOSE_SEED ?? 20260601);

// ---- differential: the fields the rules read, as compose-go's normalized model has them ----

const word = fc.constantFrom("alpha", "beta", "1000", "0", "SYS_ADMIN", "NET_RAW");
const varName = fc.constantFrom("A", "B", "C");
const boolSpelling = fc.constantFrom(
  "true",
  "false",
  "yes",
  "no",
  "on",
  "off",
  "'TRUE'",
  '"False"',
  "${B:-true}",
  "${A-false}",
);
const template = fc.oneof(
  word,
  varName.map((v) => `\${${v}}`),
  fc.tuple(varName, word).map(([v, w]) => `\${${v}:-${w}}`),
  fc.tuple(varName, word).map(([v, w]) => `\${${v}-${w}}`),
  fc.tuple(varName, word).map(([v, w]) => `\${${v}:+${w}}`),
  fc.tuple(varName, word).map(([v, w]) => `$\${${v}}x${w}`),
  fc.tuple(varName, varName, word).map(([v, u, w]) => `\${${v}:-\${${u}:-${w}}}`),
);
const volume = fc
  .tuple(
    fc.constantFrom("./data", "../up", ".", "/var/run/docker.sock", "/srv/x", "named", "~/cache"),
    fc.constantFrom("/data", "/a/../b", "/c/"),
    fc.constantFrom("", ":ro", ":rw", ":rshared", ":ro,z"),
  )
  .map(([s, t, o]) => `"${s}:${t}${o}"`);

const serviceLines = fc.record(
  {
    privileged: boolSpelling.map((b) => `privileged: ${b}`),
    user: template.map((t) => `user: "${t}"`),
    cap_add: fc
      .array(template, { maxLength: 3 })
      .map((l) => `cap_add: [${l.map((t) => `"${t}"`).join(", ")}]`),
    volumes: fc.array(volume, { maxLength: 3 }).map((l) => `volumes: [${l.join(", ")}]`),
    network_mode: fc.constantFrom("host", "none", '"${C:-bridge}"').map((m) => `network_mode: ${m}`),
    environment: fc
      .array(fc.tuple(varName, fc.option(template)), { maxLength: 3 })
      .map((l) => `environment: [${l.map(([k, v]) => (v === null ? k : `"X${k}=${v}"`)).join(", ")}]`),
  },
  { requiredKeys: [] },
);

const arbProject: fc.Arbitrary<Project> = fc
  .record({
    a: serviceLines,
    base: serviceLines,
    extendsBase: fc.boolean(),
    reset: fc.constantFrom("", "privileged: !reset null", "cap_add: !override [CHOWN]"),
    include: fc.option(serviceLines),
    dotenv: fc.array(fc.tuple(varName, word), { maxLength: 3 }),
    env: fc.array(fc.tuple(varName, fc.constantFrom("", "env", "0", "true")), { maxLength: 3 }),
    namedBind: fc.boolean(),
  })
  .map((g) => {
    const lines = (o: Record<string, string>) => Object.values(o).map((l) => `    ${l}`);
    const a = [
      "  a:",
      "    image: x",
      ...(g.extendsBase ? ["    extends: { file: lib/base.yaml, service: base }"] : []),
      ...(g.extendsBase && g.reset !== "" ? [`    ${g.reset}`] : []),
      // A tagged key replaces the service's own line for it (a key written twice is a different, refused file).
      ...lines(g.a).filter(
        (l) => !(g.extendsBase && g.reset !== "" && l.trim().startsWith(g.reset.split(":")[0] ?? "")),
      ),
    ];
    const files: Record<string, string> = {
      "compose.yaml": [
        ...(g.include === null ? [] : ["include: [sub/compose.yaml]"]),
        "services:",
        ...a,
        "volumes:",
        "  named:",
        ...(g.namedBind
          ? ["    driver: local", "    driver_opts: { type: none, o: bind, device: ./dev }"]
          : ["    {}"]),
        "",
      ].join("\n"),
      "lib/base.yaml": ["services:", "  base:", "    image: b", ...lines(g.base), ""].join("\n"),
      ".env": g.dotenv.map(([k, v]) => `${k}=${v}`).join("\n"),
    };
    if (g.include !== null)
      files["sub/compose.yaml"] = ["services:", "  inc:", "    image: i", ...lines(g.include), ""].join("\n");
    return { files, env: { HOME: "/home/u", ...Object.fromEntries(g.env) } };
  });

/** The security fields of a service, normalized the same way for both sides. */
function fields(s: unknown): unknown {
  const o = (s ?? {}) as Record<string, unknown>;
  const vols = Array.isArray(o.volumes) ? (o.volumes as Record<string, unknown>[]) : [];
  return {
    privileged: o.privileged === true,
    // compose-go's model omits empty strings (Go `omitempty`): "" and absent are the same service there.
    user: o.user === "" ? null : (o.user ?? null),
    cap_add: Array.isArray(o.cap_add) ? [...(o.cap_add as string[])].sort() : [],
    network_mode: o.network_mode === "" ? null : (o.network_mode ?? null),
    volumes: vols
      .map((v) => ({
        type: v.type,
        source: v.source ?? null,
        target: v.target,
        read_only: v.read_only === true,
        propagation: (v.bind as Record<string, unknown> | undefined)?.propagation ?? null,
      }))
      .sort((x, y) => String(x.target).localeCompare(String(y.target))),
    environment: o.environment ?? {},
  };
}

function ours(p: Project): unknown {
  const readFile = (abs: string) => {
    const t = p.files[abs.slice(PROJECT.length + 1)];
    if (t === undefined || !abs.startsWith(`${PROJECT}/`)) throw new Error("ENOENT");
    return t;
  };
  try {
    const { model } = loadComposeProject(`${PROJECT}/compose.yaml`, p.files["compose.yaml"] ?? "", {
      readFile,
      env: p.env ?? {},
    });
    const services = (model.services ?? {}) as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(services)
        .sort()
        .map((k) => [k, fields(services[k])]),
    );
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function theirs(answer: { project?: { services?: Record<string, unknown> }; error?: string }): unknown {
  if (answer.error !== undefined) return { error: answer.error };
  const services = answer.project?.services ?? {};
  return Object.fromEntries(
    Object.keys(services)
      .sort()
      .map((k) => [k, fields(services[k])]),
  );
}

describe("the Compose loader against compose-go (differential)", () => {
  it("reads the same security fields, or refuses the same projects", () => {
    const cases = fc.sample(arbProject, { numRuns: 200, seed: SEED });
    // HOME for `~`: compose-go expands it from the process environment.
    const answers = JSON.parse(
      runOracle("compose", JSON.stringify(cases.map((c) => ({ files: c.files, env: c.env })))),
    ) as { project?: { services?: Record<string, unknown> }; error?: string }[];
    let compared = 0;
    cases.forEach((c, i) => {
      const want = theirs(answers[i] ?? {});
      const got = ours(c);
      if ("error" in (want as object)) {
        // Both refuse; the messages are compose-go's and need not match word for word.
        expect(Object.keys(got as object), JSON.stringify(c)).toEqual(["error"]);
        return;
      }
      compared++;
      // The scan keeps a `~` host path as written, so the rules judge it as the home folder of whoever runs compose
      // (whatever HOME is); compose-go expands it with the process's HOME. Expanded the same way, they must match.
      const home = c.env?.HOME ?? "";
      const expanded = JSON.parse(
        JSON.stringify(got).replace(/"source":"~(?=[/"])/g, `"source":${JSON.stringify(home).slice(0, -1)}`),
      );
      expect(expanded, JSON.stringify(c, null, 1)).toEqual(want);
    });
    expect(compared).toBeGreaterThan(140);
  }, 120_000);
});

// ---- verdicts: equivalent spellings of one setting give the plain spelling's rule ids ----

interface Family {
  readonly name: string;
  /** The plain spelling: extra service lines and extra files. */
  readonly plain: Project;
  readonly spellings: fc.Arbitrary<Project>;
}

const single = (
  extra: string[],
  rest = "",
  files: Record<string, string> = {},
  env: Record<string, string> = {},
): Project => ({
  files: { "compose.yaml": `${composeFile(service("s", extra))}${rest}`, ...files },
  env,
});

const FAMILIES: Family[] = [
  {
    name: "privileged",
    plain: single(["privileged: true"]),
    spellings: fc.oneof(
      fc.constantFrom("true", "yes", "on", "'TRUE'", '"Y"', "On").map((b) => single([`privileged: ${b}`])),
      fc.constantFrom("true", "yes", "ON").map((b) => single(["privileged: ${P}"], "", {}, { P: b })),
      fc
        .constantFrom("true", "yes")
        .map((b) => single(["privileged: ${P:-false}"], "", { ".env": `P=${b}\n` })),
      fc.constant(single(["privileged: ${UNSET:-true}"])),
      fc.constant({
        files: {
          "compose.yaml": `x-p: &p\n  privileged: true\nservices:\n  s:\n    <<: *p\n${HARDENED.map((l) => `    ${l}`).join("\n")}\n`,
        },
      }),
      fc.constant({
        files: {
          "compose.yaml": "services:\n  s:\n    extends: { file: b.yaml, service: b }\n",
          "b.yaml": composeFile(service("b", ["privileged: true"])),
        },
      }),
    ),
  },
  {
    name: "the Docker socket mounted",
    plain: single(["volumes: [/var/run/docker.sock:/var/run/docker.sock]"]),
    spellings: fc.oneof(
      fc
        .constantFrom(
          "/var/run/docker.sock",
          "/run/docker.sock",
          "//var/run/./docker.sock",
          "../var/run/docker.sock",
          "../../../var/run/docker.sock",
          "${SOCK}",
          "${NOPE:-/var/run/docker.sock}",
        )
        .map((src) =>
          single([`volumes: ["${src}:/var/run/docker.sock"]`], "", {}, { SOCK: "/var/run/docker.sock" }),
        ),
      fc.constant(
        single(["volumes: [{ type: bind, source: /var/run/docker.sock, target: /var/run/docker.sock }]"]),
      ),
      fc.constant(
        single(
          ["volumes: [sock:/var/run/docker.sock]"],
          "volumes:\n  sock: { driver: local, driver_opts: { type: none, o: bind, device: /var/run/docker.sock } }\n",
        ),
      ),
      fc.constant(single(["volumes_from: [d]"], "", {}).files["compose.yaml"]).map((f) => ({
        files: {
          "compose.yaml": `${f}${service("d", ["volumes: [/var/run/docker.sock:/var/run/docker.sock]"])}\n`,
        },
      })),
    ),
  },
  {
    name: "host networking",
    plain: single(["network_mode: host"]),
    spellings: fc.oneof(
      fc.constant(single(["network_mode: ${NM}"], "", {}, { NM: "host" })),
      fc.constant(single(["network_mode: ${NM:-host}"])),
      fc.constantFrom("host", "HOST").map((d) => ({
        files: {
          "compose.yaml": `${composeFile(
            service(
              "s",
              ["networks: [lan]"],
              HARDENED.filter((l) => !l.startsWith("network_mode")),
            ),
          )}networks:\n  lan: { driver: ${d} }\n`,
        },
      })),
    ),
  },
  {
    name: "a secret in the environment",
    plain: single(["environment: [DB_PASSWORD=hunter2]"]),
    spellings: fc.oneof(
      fc.constant(single(["environment: { DB_PASSWORD: hunter2 }"])),
      fc.constant(single(["environment: [DB_PASSWORD]"], "", {}, { DB_PASSWORD: "hunter2" })),
      fc.constant(single(["env_file: app.env"], "", { "app.env": "DB_PASSWORD=hunter2\n" })),
      fc.constant(
        single(["env_file: [{ path: app.env, required: true }]"], "", {
          "app.env": "export DB_PASSWORD='hunter2'\n",
        }),
      ),
    ),
  },
];

describe("equivalent Compose spellings get the plain spelling's verdict", () => {
  for (const family of FAMILIES) {
    it(family.name, () => {
      const plain = verdicts(family.plain);
      expect(typeof plain).toBe("object");
      expect((plain as Record<string, string[]>).s?.length).toBeGreaterThan(0);
      fc.assert(
        fc.property(family.spellings, (p) => {
          expect((verdicts(p) as Record<string, string[]>).s).toEqual((plain as Record<string, string[]>).s);
        }),
        { seed: SEED, numRuns: 60 },
      );
    });
  }

  it("safe spellings add no violation to the hardened service", () => {
    const safe = fc.oneof(
      fc
        .constantFrom("false", "no", "off", "'FALSE'", "${P:-false}")
        .map((b) => single([`privileged: ${b}`])),
      fc.constant(single(["volumes: [data:/data]"], "volumes:\n  data: {}\n")),
      fc.constant(single(["volumes: [data:/data]"], "volumes:\n  data: { external: false }\n")),
      // (A service's `secrets:` are mounted at /run/secrets: a credential in the task, judged as a Kubernetes Secret
      // volume is, whatever the secret's source.)
      fc.constant(single(["tmpfs: /tmp", "environment: [LANG=C.UTF-8]"])),
      fc.constant(single(["image: $${NOT_A_VAR}"])),
    );
    fc.assert(
      fc.property(safe, (p) => {
        expect(verdicts(p)).toEqual({ s: [] });
      }),
      { seed: SEED, numRuns: 40 },
    );
  });
});
