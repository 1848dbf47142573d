/**
 * Generated spellings for Compose: line breaks compose's YAML reader takes (finding E2), Windows host paths
 * (B4), override file names (B1), and the loader's paths against compose-go itself (the compose oracle).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadComposeProject } from "../../../policy/sources/compose/load";
import { runOracle } from "../../helpers/goOracle";
import { PROJECT } from "../../scan/compose-helpers";
import { compose } from "../fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "../harness";

const BREAKS = ["\r", "\u0085", "\u2028", "\u2029"];

describe("line breaks only compose's YAML reader takes (finding E2)", () => {
  it("a key after a lone CR, NEL, LS or PS in a comment is blocked or refused, like the plain line", async () => {
    const plain = compose("app").replace(
      "read_only: true",
      "read_only: true # hardened\n    privileged: true",
    );
    assertVerdict(await scanFiles({ "compose.yaml": plain }), blocked("sandbox-disallow-privileged", "app"));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...BREAKS),
        fc.constantFrom("compose.yaml", "stack.yml", "compose.override.yaml"),
        fc.constantFrom("# hardened", "#", "# a: b"),
        async (br, file, comment) => {
          const text = compose("app").replace(
            "read_only: true",
            `read_only: true ${comment}${br}    privileged: true`,
          );
          const files: Record<string, string> =
            file === "compose.override.yaml"
              ? {
                  "compose.yaml": compose("app"),
                  [file]: `services:\n  app:\n    labels: [a=b] ${comment}${br}    privileged: true\n`,
                }
              : { [file]: text };
          assertVerdict(await scanFiles(files), {
            verdict: "blocked",
            rule: "sandbox-disallow-privileged",
            object: "app",
            engineRefuses: true,
          });
        },
      ),
      { numRuns: 24 },
    );
  });

  it("a Compose file whose services only compose's reader sees is judged", async () => {
    for (const br of ["\r", "\u0085"]) {
      const text = `name: x # c${br}services:${br}  app:${br}    image: busybox${br}    privileged: true${br}`;
      assertVerdict(await scanFiles({ "stack.yaml": text }), blocked("sandbox-disallow-privileged", "app"));
    }
  });

  it("CR LF files, and a lone CR or NEL that hides nothing, pass (no false denial)", async () => {
    const safe = compose("app");
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("\r\n", "\r", "\u0085"), async (br) => {
        const text = safe
          .replace("read_only: true", `read_only: true # hardened${br}`)
          .split("\n")
          .join(br === "\r\n" ? "\r\n" : "\n");
        assertVerdict(await scanFiles({ "compose.yaml": text }), passes);
      }),
      { numRuns: 6 },
    );
  });
});

/**
 * The Docker engine's named pipe, as Windows and compose-go accept it. In short syntax compose-go's ParseVolume
 * takes a source for a host path only when it starts with `/` or `\\` (`\/.\pipe\x` names a volume, which the
 * daemon refuses), so `\/` opens only the long syntax's paths.
 */
const pipe = (prefixes: readonly string[]) =>
  fc
    .tuple(
      fc.constantFrom(...prefixes),
      fc.constantFrom(".", "?"),
      fc.constantFrom("\\", "/"),
      fc.constantFrom("pipe", "PIPE", "Pipe"),
      fc.constantFrom("\\", "/"),
      fc.constantFrom("docker_engine", "DOCKER_ENGINE", "dockerDesktopLinuxEngine"),
    )
    .map((parts) => parts.join(""));
const SHORT_PREFIXES = ["\\\\", "//", "/\\"];

describe("Windows host paths, every spelling (finding B4)", () => {
  it("the engine's named pipe in short or long syntax is blocked like type: npipe", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .boolean()
          .chain((long) =>
            fc.tuple(fc.constant(long), pipe(long ? [...SHORT_PREFIXES, "\\/"] : SHORT_PREFIXES)),
          ),
        async ([long, path]) => {
          const q = path.replace(/'/g, "''");
          const vol = long
            ? `volumes:\n  - type: bind\n    source: '${q}'\n    target: '${q}'`
            : `volumes:\n  - '${q}:${q}'`;
          assertVerdict(
            await scanFiles({ "compose.yaml": compose("app", vol) }),
            blocked("sandbox-disallow-runtime-socket", "app"),
          );
        },
      ),
      { numRuns: 30 },
    );
  });

  it("a drive folder of the host is blocked, a job folder on a drive is not a runtime path", async () => {
    for (const src of ["C:\\", "c:/", "D:\\ProgramData\\docker", "C:/ProgramData/Docker/"])
      assertVerdict(
        await scanFiles({
          "compose.yaml": compose("app", `volumes:\n  - type: bind\n    source: '${src}'\n    target: /h`),
        }),
        blocked(undefined, "app"),
      );
  });
});

describe("every override file name (finding B1)", () => {
  it("whichever default names the two files have, the override's setting is judged", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml"),
        fc.constantFrom(
          "compose.override.yml",
          "compose.override.yaml",
          "docker-compose.override.yml",
          "docker-compose.override.yaml",
        ),
        fc.constantFrom(
          ["privileged: true", "sandbox-disallow-privileged"],
          ["volumes: [/etc:/e:ro]", "sandbox-disallow-sensitive-host-mounts"],
          ["cap_add: [SYS_ADMIN]", "sandbox-disallow-added-capabilities"],
        ),
        async (main, override, [line, rule]) => {
          const files = { [main]: compose("app"), [override]: `services:\n  app:\n    ${line}\n` };
          assertVerdict(await scanFiles(files), blocked(rule, "app"));
          assertVerdict(
            await scanFiles({ ...files, [override]: "services:\n  app:\n    labels: [a=b]\n" }),
            passes,
          );
        },
      ),
      { numRuns: 20 },
    );
  });
});

interface OracleAnswer {
  project?: {
    services?: Record<string, { volumes?: { source?: string }[] }>;
    volumes?: Record<string, { driver_opts?: { device?: string } }>;
    networks?: Record<string, { name?: string; external?: boolean }>;
  };
  error?: string;
}

describe("host paths and external names as compose-go resolves them (the compose oracle)", () => {
  it("bind sources, volume devices and external network names equal compose-go's", () => {
    const source = fc.constantFrom(
      "\\\\.\\pipe\\docker_engine",
      "C:\\ProgramData\\docker",
      "C:/x",
      "./data",
      "data/x",
      "/srv/x",
      "../up",
    );
    const device = fc.constantFrom("var/run", "./var/run", "/srv/d", "C:\\d", "\\\\.\\pipe\\x");
    const driver = fc.constantFrom("", "    driver: local\n", "    driver: other\n");
    const o = fc.constantFrom("bind", "rbind", "bind,ro");
    const ext = fc.constantFrom("external: true", "external: {name: host}", "name: host\n    external: true");
    const cases = fc
      .sample(fc.tuple(source, device, driver, o, ext), { numRuns: 60 })
      .map(([s, d, drv, opt, e]) => ({
        files: {
          "compose.yaml": `services:\n  app:\n    image: busybox\n    volumes:\n      - type: bind\n        source: '${s}'\n        target: /a\n      - vv:/b\n    networks: [hn]\nvolumes:\n  vv:\n${drv}    driver_opts: {type: none, o: '${opt}', device: '${d}'}\nnetworks:\n  hn:\n    ${e}\n`,
        },
        env: {},
      }));
    const answers = JSON.parse(runOracle("compose", JSON.stringify(cases))) as OracleAnswer[];
    cases.forEach((c, i) => {
      const want = answers[i]?.project;
      expect(want, answers[i]?.error).toBeDefined();
      const text = c.files["compose.yaml"];
      const readFile = (p: string): string => {
        if (p === `${PROJECT}/compose.yaml`) return text;
        throw new Error(`ENOENT: ${p}`);
      };
      const { model } = loadComposeProject(`${PROJECT}/compose.yaml`, text, { readFile, env: {} });
      const m = model as OracleAnswer["project"] & Record<string, unknown>;
      const label = JSON.stringify(c.files);
      expect(m?.services?.app?.volumes?.[0]?.source, label).toBe(want?.services?.app?.volumes?.[0]?.source);
      expect(m?.volumes?.vv?.driver_opts?.device, label).toBe(want?.volumes?.vv?.driver_opts?.device);
      const net = m?.networks?.hn;
      expect(net?.name ?? "hn", label).toBe(want?.networks?.hn?.name);
    });
  }, 120_000);
});
