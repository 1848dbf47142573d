// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Compose interpolation is written as `${VAR}` in plain strings.
// The Compose loader, feature by feature: each case names what `docker compose config` does (compose-go v2.16.2) and
// asserts the exact reading or verdict the scan gives.
import { describe, expect, it } from "vitest";
import { substitute } from "../../policy/sources/compose/interpolate";
import { parseInput } from "../../policy/sources/text/documents";
import {
  composeFile,
  HARDENED,
  load,
  loaded,
  type Project,
  ruleIds,
  service,
  verdicts,
  view,
} from "./compose-helpers";

const one = (
  extra: readonly string[],
  more: Omit<Project, "files"> & { files?: Record<string, string> } = {},
) => verdicts({ ...more, files: { "compose.yaml": composeFile(service("s", extra)), ...more.files } });

describe("interpolation", () => {
  const env: Record<string, string | undefined> = { SET: "v", EMPTY: "" };
  const lookup = (k: string) => env[k];
  it.each([
    ["$SET", "v"],
    ["${SET}", "v"],
    ["${UNSET:-d}", "d"],
    ["${EMPTY:-d}", "d"],
    ["${EMPTY-d}", ""],
    ["${UNSET-d}", "d"],
    ["${SET:+alt}", "alt"],
    ["${EMPTY:+alt}", ""],
    ["${EMPTY+alt}", "alt"],
    ["${UNSET+alt}", ""],
    ["$${SET}", "${SET}"],
    ["$$SET", "$SET"],
    ["${UNSET:-${SET}}", "v"],
    ["${UNSET:-${ALSO:-deep}}x", "deepx"],
    ["a${SET}b${UNSET:-c}d", "avbcd"],
    ["$1 and $", "$1 and $"],
  ])("%s reads %s", (template, expected) => {
    expect(substitute(template, lookup)).toBe(expected);
  });

  it.each([
    ["${UNSET:?need it}", "required variable UNSET is missing a value: need it"],
    ["${EMPTY:?}", "required variable EMPTY is missing a value"],
    ["${UNSET?gone}", "required variable UNSET is missing a value: gone"],
  ])("%s is an error naming the variable", (template, message) => {
    expect(() => substitute(template, lookup)).toThrow(message);
  });

  it("`${EMPTY?x}` is set, so it is not an error", () => {
    expect(substitute("${EMPTY?x}", lookup)).toBe("");
  });

  it("a required variable that is unset is bad input (exit 2) naming it", () => {
    const parsed = parseInput("compose.yaml", composeFile(service("s", ["image: ${IMAGE:?set IMAGE}"])), {
      path: "/p/compose.yaml",
      readFile: () => {
        throw new Error("none");
      },
      env: {},
    });
    expect(parsed.items).toEqual([]);
    expect(parsed.errors.map((e) => e.message)).toEqual([
      "Compose file cannot be loaded: error while interpolating services.s.image: required variable IMAGE is missing a value: set IMAGE",
    ]);
  });

  it("`.env` next to the file fills what the environment does not set; the environment wins", () => {
    const p: Project = {
      files: {
        "compose.yaml": composeFile(
          service("s", ["user: ${U}", "privileged: ${P:-false}", "cap_add: ['${CAP}']"]),
        ),
        ".env": "U=0\nP=true\nCAP=NET_RAW\n",
      },
      env: { U: "1000", CAP: "SYS_ADMIN" },
    };
    const s = loaded(p).s ?? {};
    expect(s.user).toBe("1000");
    expect(s.privileged).toBe(true);
    expect(s.capabilities).toEqual({ adds: ["SYS_ADMIN"], drops: ["ALL"] });
    const r = load(p);
    expect("error" in r ? [] : r.assumptions).toEqual([
      "${U} taken from the environment",
      "${P} taken from .env",
      "${CAP} taken from the environment",
    ]);
  });

  it("an unset variable read as its default is stated, and the scan item carries it", () => {
    const parsed = parseInput("compose.yaml", composeFile(service("s", ["image: ${TAG:-busybox}"])), {
      path: "/p/compose.yaml",
      readFile: () => {
        throw new Error("none");
      },
      env: {},
    });
    expect(parsed.items[0]?.assumptions).toEqual([
      "${TAG} is not set: read as its default or an empty string",
    ]);
  });
});

describe("YAML as compose-go reads it", () => {
  it.each([
    ["privileged: true"],
    ["privileged: yes"],
    ["privileged: on"],
    ["privileged: 'TRUE'"],
    ['privileged: "y"'],
    ["privileged: ${PRIV}"],
  ])("%s is privileged", (line) => {
    expect(one([line], { env: { PRIV: "Yes" } })).toEqual({
      s: ["sandbox-disallow-privilege-escalation", "sandbox-disallow-privileged"],
    });
  });

  it.each([["privileged: off"], ["privileged: 'no'"], ["privileged: false"]])("%s is not", (line) => {
    expect(one([line])).toEqual({ s: [] });
  });

  it("a value compose-go cannot cast to a boolean is bad input, not absent", () => {
    expect(one(["privileged: '1'"])).toBe(
      "error: error while interpolating services.s.privileged: failed to cast to expected type: invalid boolean: 1",
    );
  });

  it("merge keys and anchors carry a dangerous setting; the service's own keys win", () => {
    const file = [
      "x-base: &base",
      "  privileged: true",
      "  cap_add: [SYS_ADMIN]",
      "services:",
      "  s:",
      "    <<: *base",
      ...HARDENED.map((l) => `    ${l}`),
      "    cap_add: [CHOWN]",
    ].join("\n");
    const s = loaded({ files: { "compose.yaml": file } }).s ?? {};
    expect(s.privileged).toBe(true);
    expect(s.capabilities).toEqual({ adds: ["CHOWN"], drops: ["ALL"] });
  });

  it("duplicate keys are refused with their line", () => {
    const r = load({ files: { "compose.yaml": "services:\n  s:\n    image: a\n    image: b\n" } });
    expect("error" in r && [r.error.message, r.error.line]).toEqual([
      'mapping key "image" already defined at line 3',
      4,
    ]);
  });

  it("every document of the file is merged, as compose-go loads them", () => {
    const file = `${composeFile(service("s"))}---\nservices:\n  s:\n    pid: host\n`;
    expect(verdicts({ files: { "compose.yaml": file } })).toEqual({
      s: ["sandbox-disallow-host-namespaces"],
    });
  });
});

describe("extends, include, !reset and !override", () => {
  const base = composeFile(
    service("base", ["privileged: true", "cap_add: [SYS_ADMIN]", "volumes: [./data:/data]"]),
  );

  it("extends another file: its settings and paths (relative to that file) are inherited", () => {
    const s = loaded({
      files: {
        "compose.yaml": "services:\n  s:\n    extends: { file: lib/base.yaml, service: base }\n",
        "lib/base.yaml": base,
      },
    }).s;
    expect(s?.privileged).toBe(true);
    expect(s?.mounts).toEqual([{ type: "bind", source: "/ROOT/lib/data", target: "/data", readOnly: false }]);
  });

  it("!reset drops what the base said and !override replaces it", () => {
    const s = loaded({
      files: {
        "compose.yaml": [
          "services:",
          "  s:",
          "    extends: { file: lib/base.yaml, service: base }",
          "    privileged: !reset null",
          "    cap_add: !override [CHOWN]",
        ].join("\n"),
        "lib/base.yaml": base,
      },
    }).s;
    expect(s?.privileged).toBeUndefined();
    expect(s?.capabilities).toEqual({ adds: ["CHOWN"], drops: ["ALL"] });
  });

  it("an extends cycle is refused", () => {
    const r = load({
      files: { "compose.yaml": "services:\n  a: { extends: b, image: x }\n  b: { extends: a, image: y }\n" },
    });
    expect("error" in r && r.error.message).toMatch(/^Circular reference with extends/);
  });

  it("include brings the other project's services, with paths relative to it", () => {
    const s = loaded({
      files: {
        "compose.yaml": `include: [sub/compose.yaml]\n${composeFile(service("s"))}`,
        "sub/compose.yaml": composeFile(service("inc", ["volumes: [../../etc:/host-etc:ro]"])),
      },
    });
    expect(s.inc?.mounts).toEqual([{ type: "bind", source: "/etc", target: "/host-etc", readOnly: true }]);
    expect(ruleIds(s.inc ?? {})).toEqual(["sandbox-disallow-sensitive-host-mounts"]);
  });

  it("an include cycle is refused", () => {
    const r = load({
      files: { "compose.yaml": `include: [compose.yaml]\n${composeFile(service("s"))}` },
    });
    expect("error" in r && r.error.message).toMatch(/^include cycle detected/);
  });
});

describe("the project's own parts, judged as what they put in the container", () => {
  it("a secret or config whose file is a host path is a read-only bind mount of it", () => {
    const files = {
      "compose.yaml": `${composeFile(service("s", ["secrets: [key]", "configs: [{ source: sock, target: /s }]"]))}secrets:\n  key: { file: /etc/shadow }\nconfigs:\n  sock: { file: /var/run/docker.sock }\n`,
    };
    expect(loaded({ files }).s?.mounts).toEqual([
      { type: "bind", source: "/etc/shadow", target: "/run/secrets/key", readOnly: true },
      { type: "bind", source: "/var/run/docker.sock", target: "/s", readOnly: true },
    ]);
    // The secret is also a Secret mount at /run/secrets/key (compose/project.ts secretMounts).
    expect(verdicts({ files })).toEqual({
      s: [
        "sandbox-disallow-runtime-socket",
        "sandbox-disallow-secret-env",
        "sandbox-disallow-sensitive-host-mounts",
      ],
    });
  });

  it("env_file variables are judged like environment (a missing required file is bad input)", () => {
    expect(one(["env_file: [app.env]"], { files: { "app.env": "DB_PASSWORD=hunter2\n" } })).toEqual({
      s: ["sandbox-disallow-secret-env"],
    });
    expect(one(["env_file: [{ path: none.env, required: false }]"])).toEqual({ s: [] });
    expect(one(["env_file: none.env"])).toBe("error: env file /ROOT/none.env not found");
  });

  it("a named volume carries its driver and options, which bind a host path", () => {
    const files = {
      "compose.yaml": `${composeFile(service("s", ["volumes: [data:/data]"]))}volumes:\n  data:\n    driver: local\n    driver_opts: { type: none, o: bind, device: /var/run }\n`,
    };
    expect(loaded({ files }).s?.mounts).toMatchObject([
      {
        type: "volume",
        source: "data",
        target: "/data",
        volumeOptions: {
          driverName: "local",
          driverOptions: { type: "none", o: "bind", device: "/var/run" },
        },
      },
    ]);
    // `/var/run` holds systemd's and cloud-init's folders too; it is written, and no job root is declared.
    expect(verdicts({ files })).toEqual({
      s: [
        "sandbox-disallow-runtime-socket",
        "sandbox-disallow-sensitive-host-mounts",
        "sandbox-require-single-job-mount",
      ],
    });
  });

  it("a network whose driver is host is host networking whatever its name", () => {
    const files = {
      "compose.yaml": `${composeFile(
        service(
          "s",
          ["networks: [quiet]"],
          HARDENED.filter((l) => !l.startsWith("network_mode")),
        ),
      )}networks:\n  quiet: { driver: host }\n`,
    };
    expect(loaded({ files }).s?.networkMode).toBe("host");
  });

  it("network_mode service:x is x's network, so joining a host-network service is host networking", () => {
    const files = {
      "compose.yaml": composeFile(
        service("s", ["network_mode: service:h"]),
        service("h", ["network_mode: host"]),
      ),
    };
    expect(loaded({ files }).s?.networkMode).toBe("host");
  });

  it("volumes_from a service gets its mounts", () => {
    const files = {
      "compose.yaml": composeFile(
        service("s", ["volumes_from: [sock:ro]"]),
        service("sock", ["volumes: [/var/run/docker.sock:/var/run/docker.sock]"]),
      ),
    };
    expect(loaded({ files }).s?.mounts).toEqual([
      { type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock", readOnly: true },
    ]);
  });

  it("uts: host is the host's UTS namespace", () => {
    expect(
      view(loaded({ files: { "compose.yaml": composeFile(service("s", ["uts: host"])) } }).s ?? {}).namespaces
        .hostUTS,
    ).toBe(true);
    expect(
      view(loaded({ files: { "compose.yaml": composeFile(service("s")) } }).s ?? {}).namespaces.hostUTS,
    ).toBeUndefined();
  });

  it("a relative path is resolved against the Compose file's folder, never read as the host root", () => {
    const s = loaded({
      files: { "compose.yaml": composeFile(service("s", ["volumes: [.:/src, ./etc:/e]"])) },
    }).s;
    expect(s?.mounts).toEqual([
      { type: "bind", source: "/ROOT", target: "/src", readOnly: false },
      { type: "bind", source: "/ROOT/etc", target: "/e", readOnly: false },
    ]);
  });
});
