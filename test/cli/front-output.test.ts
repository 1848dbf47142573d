// The front's reading of the engine's events and its one-message failures, on recorded event shapes (the real-engine
// behaviour is in test/stacks-engine/front.test.ts).
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { describe, expect, it } from "vitest";
import { EngineWatch, objectOf } from "../../cli/events";
import { describeFailure, engineErrorLines } from "../../cli/failure";
import { main } from "../../cli/main";
import { describeChanges, Reporter } from "../../cli/output";
import { ProgressLines } from "../../cli/progress";
import { wallsTable } from "../../cli/walls-table";

const urn = (type: string, name: string) =>
  `urn:pulumi:dev::sandbox::sandbox:docker:SandboxProject$${type}::${name}`;
const NET = urn("docker:index/network:Network", "p-net");
const PROBE = urn("docker:index/container:Container", "p-default-probe");
let seq = 0;
// Recorded shapes, loosely typed: the engine writes fields (`new: null`) its declared types do not admit.
const ev = (e: Record<string, unknown>) =>
  ({ sequence: seq++, timestamp: 0, ...e }) as unknown as EngineEvent;
const meta = (op: string, u: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  op,
  urn: u,
  type: "t",
  provider: "",
  old: {},
  ...extra,
});

describe("EngineWatch", () => {
  it("names objects in the user's terms", () => {
    expect(objectOf(PROBE)).toEqual({ name: "p-default-probe", type: "docker Container" });
    expect(objectOf("urn:pulumi:dev::sandbox::sandbox:docker:SandboxProject::p")).toEqual({
      name: "p",
      type: "sandbox SandboxProject",
    });
  });

  it("reads drift from the refresh step: gone (new is null) and changed (diffs)", () => {
    const w = new EngineWatch(() => {});
    w.onEvent(ev({ resOutputsEvent: { metadata: meta("refresh", NET, { new: null }) } }));
    w.onEvent(ev({ resOutputsEvent: { metadata: meta("refresh", PROBE, { new: {}, diffs: ["labels"] }) } }));
    w.onEvent(
      ev({ resOutputsEvent: { metadata: meta("refresh", urn("x:y:Z", "same"), { new: {}, diffs: [] }) } }),
    );
    expect(w.drift).toEqual([
      { name: "p-net", type: "docker Network", change: "gone", fields: [] },
      { name: "p-default-probe", type: "docker Container", change: "changed", fields: ["labels"] },
    ]);
  });

  it("keeps each warning and each error once, however often the engine repeats it", () => {
    const w = new EngineWatch(() => {});
    const warning = "using pulumi-resource-docker from $PATH at /x/pulumi-resource-docker\n";
    for (let i = 0; i < 4; i++) {
      w.onEvent(ev({ diagnosticEvent: { message: warning, color: "never", severity: "warning" } }));
      w.onEvent(
        ev({ diagnosticEvent: { urn: PROBE, message: "image gone\n", color: "never", severity: "error" } }),
      );
    }
    w.onEvent(ev({ diagnosticEvent: { message: "update failed\n", color: "never", severity: "error" } }));
    expect(w.warnings).toEqual([warning.trim()]);
    expect(w.failures).toEqual([
      { object: { name: "p-default-probe", type: "docker Container" }, message: "image gone" },
    ]);
  });

  it("prints progress for declared objects only, as done or as planned", () => {
    const lines: string[] = [];
    const w = new EngineWatch((l) => lines.push(l));
    w.onEvent(
      ev({ resOutputsEvent: { metadata: { ...meta("create", NET), type: "docker:index/network:Network" } } }),
    );
    w.onEvent(
      ev({ resOutputsEvent: { metadata: { ...meta("create", PROBE), type: "x" }, planning: true } as never }),
    );
    w.onEvent(
      ev({
        resOutputsEvent: {
          metadata: {
            ...meta("create", "urn:pulumi:dev::sandbox::pulumi:pulumi:Stack::s"),
            type: "pulumi:pulumi:Stack",
          },
        },
      }),
    );
    expect(lines).toEqual([
      "  created p-net (docker Network)",
      "  would create p-default-probe (docker Container)",
    ]);
  });
});

describe("describeFailure", () => {
  it("one message for one cause on several objects, with what to do", () => {
    const w = new EngineWatch(() => {});
    const message =
      'image "x:1" is not present on the Docker engine, and the toolkit\'s local provider never pulls';
    for (const name of ["a-probe", "b-probe"]) {
      const u = urn("docker:index/container:Container", name);
      w.onEvent(ev({ diagnosticEvent: { urn: u, message, color: "never", severity: "error" } }));
      w.onEvent(ev({ resOpFailedEvent: { metadata: meta("create", u), status: 1, steps: 1 } }));
    }
    const f = describeFailure("up", "dev", w, new Error("code: -2\n stderr: Command failed ..."), undefined);
    expect(f.kind).toBe("engine");
    expect(f.object).toBe("a-probe");
    expect(f.message).toBe(
      `up of stack dev failed: creating a-probe (docker Container), b-probe (docker Container): ${message}\n` +
        "  what to do: build the offline images with `bash toolchain/docker.sh`, or name an image that is on the engine in the stack's config; nothing is ever pulled",
    );
  });

  it("says that an object of the project exists outside the stack's state, and how to remove it", () => {
    const w = new EngineWatch(() => {});
    const u = urn("docker:index/container:Container", "p-proxy-web");
    const message =
      '(HTTP code 409) unexpected - Conflict. The container name "/p-proxy-web" is already in use by container "0123abcd". You have to remove (or rename) that container to be able to reuse that name.';
    w.onEvent(ev({ diagnosticEvent: { urn: u, message, color: "never", severity: "error" } }));
    w.onEvent(ev({ resOpFailedEvent: { metadata: meta("create", u), status: 1, steps: 1 } }));
    const f = describeFailure("up", "dev", w, new Error("code: 255"), undefined);
    expect(f.message).toBe(
      `up of stack dev failed: an object of this project already exists on the engine, outside this stack's state (creating p-proxy-web (docker Container): ${message})\n` +
        "  what to do: objects of this project exist on the engine outside this stack's state (another checkout, or an earlier state of the stack, made them): remove them with `./sandbox off dev` (it removes every object labelled with the project) and run the verb again",
    );
  });

  it("falls back to the engine's own error lines, without its command line", () => {
    const detail =
      "code: -2\n stdout: \n stderr: Command failed with exit code 1: pulumi up --yes\nerror: project 'main' could not be read\nUpdating (dev):\nerror: project 'main' could not be read";
    expect(engineErrorLines(detail)).toEqual(["project 'main' could not be read"]);
    const f = describeFailure("up", "dev", new EngineWatch(() => {}), new Error(detail), undefined);
    expect(f.message).toBe(
      "up of stack dev failed: project 'main' could not be read\n  what to do: run `./sandbox up dev --verbose` for the engine's full output",
    );
  });

  it("names a held lock and a cancellation for what they are", () => {
    const w = new EngineWatch(() => {});
    const locked = describeFailure(
      "up",
      "dev",
      w,
      new Error(
        "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n  file:///x: created by root@host (pid 42) at 2026",
      ),
      undefined,
    );
    expect(locked.kind).toBe("locked");
    expect(locked.message).toContain(
      "up of stack dev did not start: another run on this stack (root@host (pid 42)) holds its lock",
    );
    expect(describeFailure("up", "dev", w, new Error("x"), "SIGINT").kind).toBe("cancelled");
  });

  it("lists every mandatory policy finding in one message", () => {
    const w = new EngineWatch(() => {});
    w.onEvent(
      ev({
        policyEvent: {
          resourceUrn: PROBE,
          message: "publishes port 8080\nmore detail",
          color: "never",
          policyName: "sandbox-disallow-exposed-ports",
          policyPackName: "p",
          policyPackVersion: "1",
          policyPackVersionTag: "1",
          enforcementLevel: "mandatory",
        },
      }),
    );
    const f = describeFailure("preview", "dev", w, new Error("x"), undefined);
    expect(f.message.split("\n").slice(0, 2)).toEqual([
      "preview of stack dev was refused by the policy pack:",
      "  - p-default-probe (docker Container): sandbox-disallow-exposed-ports: publishes port 8080",
    ]);
  });
});

describe("output", () => {
  it("says what changed in words", () => {
    expect(describeChanges({ create: 3, same: 4 }, false)).toBe("3 created, 4 unchanged");
    expect(describeChanges({ create: 3, same: 4 }, true)).toBe("3 to create, 4 unchanged");
    expect(describeChanges({}, false)).toBe("nothing");
  });

  it("prints each warning once and puts exactly one JSON document on stdout", () => {
    const out: string[] = [];
    const err: string[] = [];
    const rep = new Reporter({ out: (t) => out.push(t), err: (t) => err.push(t) }, true, false);
    rep.warning("w");
    rep.warning("w\n");
    rep.engine("raw engine output");
    rep.result({ verb: "up", stack: "dev", ok: true, exitCode: 0 }, "text");
    expect(err).toEqual(["warning: w\n"]);
    expect(out).toEqual([
      `${JSON.stringify({ verb: "up", stack: "dev", ok: true, exitCode: 0, warnings: ["w"] })}\n`,
    ]);
  });

  it("renders the walls table line for line as `probe` does", () => {
    expect(
      wallsTable("default", {
        passed: false,
        walls: [
          { wall: "user", declared: "1000:1000", observed: "1000:1000", ok: true },
          { wall: "pidsMax", declared: "128", observed: "max", ok: null },
          { wall: "egress", declared: "denied", observed: "allowed", ok: false },
        ],
      }),
    ).toBe(
      "template default: A WALL FAILED\n" +
        "  ok   user          declared 1000:1000; observed 1000:1000\n" +
        "  n/a  pidsMax       declared 128; observed max\n" +
        "  FAIL egress        declared denied; observed allowed\n",
    );
  });

  it("answers an unknown command with --json in JSON on stdout, exit 2", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(["launch", "dev", "--json"], {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    expect(code).toBe(2);
    expect(err).toEqual([]);
    expect(JSON.parse(out.join(""))).toMatchObject({
      verb: "launch",
      ok: false,
      exitCode: 2,
      error: { kind: "bad-input" },
    });
  });
});

describe("the plan's steps and the live line", () => {
  it("records each step with the keys that change or force a replacement, and why", () => {
    const w = new EngineWatch(() => {});
    const typed = (op: string, urn: string, more: Record<string, unknown>) =>
      ev({
        resourcePreEvent: {
          metadata: { ...meta(op as never, urn), type: "docker:index/container:Container", ...more },
          planning: true,
        },
      } as never);
    w.onEvent(typed("update", PROBE, { diffs: ["labels", "envs"] }));
    w.onEvent(typed("replace", NET, { keys: ["ipamConfigs"], diffs: ["ipamConfigs", "labels"] }));
    w.onEvent(typed("same", PROBE, {}));
    w.onEvent(typed("delete", NET, {}));
    expect(w.steps.map((s) => [s.op, s.name, s.keys, s.reason])).toEqual([
      ["update", "p-default-probe", ["labels", "envs"], "changed: labels, envs"],
      ["replace", "p-net", ["ipamConfigs"], "ipamConfigs cannot change in place"],
      ["delete", "p-net", [], "no longer in the program"],
    ]);
  });

  it("draws a spinner line on a terminal that gives way to each done line, and writes none off a terminal", () => {
    const onTerminal: string[] = [];
    const live = new ProgressLines((t) => onTerminal.push(t), true);
    const w = new EngineWatch(live);
    w.onEvent(ev({ resourcePreEvent: { metadata: meta("create", PROBE) } } as never));
    w.onEvent(
      ev({
        resOutputsEvent: { metadata: { ...meta("create", PROBE), type: "docker:index/container:Container" } },
      }),
    );
    live.stop();
    expect(onTerminal.join("")).toBe(
      "\r\x1b[2K⠙ creating p-default-probe (docker Container)…\r\x1b[2K  created p-default-probe (docker Container)\n",
    );
    const offTerminal: string[] = [];
    const plain = new ProgressLines((t) => offTerminal.push(t), false);
    const w2 = new EngineWatch(plain);
    w2.onEvent(ev({ resourcePreEvent: { metadata: meta("create", PROBE) } } as never));
    w2.onEvent(
      ev({
        resOutputsEvent: { metadata: { ...meta("create", PROBE), type: "docker:index/container:Container" } },
      }),
    );
    expect(offTerminal).toEqual(["  created p-default-probe (docker Container)\n"]);
  });
});
