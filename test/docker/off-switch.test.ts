// The off switch's order, concurrency and error handling, against a fake engine that records every call (the real
// engine's behaviour is test/runtime/off-switch.test.ts).
import type Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { OFF_CONCURRENCY, OFF_SWEEPS, OffSwitchError, offSwitch } from "../../runtime/offSwitch";

interface FakeContainer {
  id: string;
  name: string;
  /** What removing it answers: nothing (removed), or the engine's error. */
  fails?: { statusCode: number; message: string };
}

const engineError = (statusCode: number, message: string) =>
  Object.assign(new Error(`(HTTP code ${statusCode}) unexpected - ${message}`), { statusCode });

/** A fake engine: containers, networks and volumes of one project; `onList` runs after each container listing. */
function fakeEngine(
  containers: FakeContainer[],
  opts: {
    networks?: string[];
    volumes?: string[];
    networkFails?: Record<string, { statusCode: number; message: string }>;
    onList?: (calls: number) => void;
    removeDelayMs?: number;
  } = {},
) {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let lists = 0;
  const live = new Map(containers.map((c) => [c.id, c]));
  const networks = new Set(opts.networks ?? []);
  const volumes = new Set(opts.volumes ?? []);
  const docker = {
    async listContainers(o: { all: boolean; filters: { label: string[] } }) {
      calls.push(`list containers all=${o.all} ${o.filters.label.join(",")}`);
      const found = [...live.values()].map((c) => ({ Id: c.id, Names: [`/${c.name}`] }));
      opts.onList?.(++lists);
      return found;
    },
    getContainer(id: string) {
      return {
        async remove(o: { force: boolean; v: boolean }) {
          calls.push(`remove container ${id} force=${o.force} v=${o.v}`);
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((r) => setTimeout(r, opts.removeDelayMs ?? 1));
          inFlight--;
          const c = live.get(id);
          if (c === undefined) throw engineError(404, `No such container: ${id}`);
          if (c.fails !== undefined) throw engineError(c.fails.statusCode, c.fails.message);
          live.delete(id);
        },
      };
    },
    async listNetworks() {
      calls.push("list networks");
      return [...networks].map((n) => ({ Id: n, Name: n }));
    },
    getNetwork(id: string) {
      return {
        async remove() {
          calls.push(`remove network ${id}`);
          const f = opts.networkFails?.[id];
          if (f !== undefined) throw engineError(f.statusCode, f.message);
          networks.delete(id);
        },
      };
    },
    async listVolumes() {
      calls.push("list volumes");
      return { Volumes: [...volumes].map((v) => ({ Name: v })) };
    },
    getVolume(name: string) {
      return {
        async remove() {
          calls.push(`remove volume ${name}`);
          volumes.delete(name);
        },
      };
    },
  };
  return {
    docker: docker as unknown as Dockerode,
    calls,
    live,
    add: (c: FakeContainer) => live.set(c.id, c),
    maxInFlight: () => maxInFlight,
  };
}

const many = (n: number, prefix = "c"): FakeContainer[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, name: `p-task-${prefix}${i}` }));

describe("the off switch's order and concurrency", () => {
  it("removes every container (forced, with its anonymous volumes) before any network or volume", async () => {
    const e = fakeEngine(many(3), { networks: ["p-net"], volumes: ["p-vol"] });
    const report = await offSwitch(e.docker, "p");
    expect(report).toEqual({
      project: "p",
      containers: ["p-task-c0", "p-task-c1", "p-task-c2"],
      networks: ["p-net"],
      volumes: ["p-vol"],
    });
    expect(e.calls[0]).toBe("list containers all=true sandbox.project=p");
    const lastContainer = Math.max(...e.calls.map((c, i) => (c.startsWith("remove container") ? i : -1)));
    expect(e.calls.indexOf("list networks")).toBeGreaterThan(lastContainer);
    expect(e.calls.filter((c) => c.startsWith("remove container"))).toEqual(
      ["c0", "c1", "c2"].map((id) => `remove container ${id} force=true v=true`),
    );
  });

  it.each([
    [1, 1],
    [4, 4],
    [OFF_CONCURRENCY, OFF_CONCURRENCY],
    [Number.POSITIVE_INFINITY, 120],
  ])("keeps at most %s removals in flight", async (concurrency, expected) => {
    const e = fakeEngine(many(120), { removeDelayMs: 5 });
    const report = await offSwitch(e.docker, "p", { concurrency });
    expect(report.containers).toHaveLength(120);
    expect(e.maxInFlight()).toBe(expected);
  });

  it("removes containers created while it runs (a launch or a pool refill racing it), sweeping again", async () => {
    const e = fakeEngine(many(2), {
      onList: (n) => {
        if (n <= 2) e.add({ id: `late${n}`, name: `p-pool-late${n}` });
      },
    });
    const report = await offSwitch(e.docker, "p");
    expect(report.containers).toEqual(["p-pool-late1", "p-pool-late2", "p-task-c0", "p-task-c1"]);
    expect(e.live.size).toBe(0);
  });

  it(`gives up after ${OFF_SWEEPS} sweeps when containers keep appearing, and says so`, async () => {
    const e = fakeEngine(many(1), { onList: (n) => e.add({ id: `x${n}`, name: `p-task-x${n}` }) });
    const err = await offSwitch(e.docker, "p").catch((x: unknown) => x);
    expect(err).toBeInstanceOf(OffSwitchError);
    const { failures, report } = err as OffSwitchError;
    expect(report.containers).toHaveLength(OFF_SWEEPS);
    expect(failures).toEqual([
      {
        kind: "container",
        name: `p-task-x${OFF_SWEEPS}`,
        message: `created while the off switch ran, after ${OFF_SWEEPS} sweeps; something keeps starting tasks of the project`,
      },
    ]);
  });
});

describe("the off switch's errors", () => {
  it("counts a container already gone, or whose removal is in progress elsewhere, as no error", async () => {
    const e = fakeEngine([
      { id: "a", name: "p-task-a" },
      { id: "b", name: "p-task-b", fails: { statusCode: 404, message: "No such container: b" } },
      {
        id: "c",
        name: "p-task-c",
        fails: { statusCode: 409, message: "removal of container c is already in progress" },
      },
    ]);
    expect((await offSwitch(e.docker, "p")).containers).toEqual(["p-task-a"]);
  });

  it("removes everything it can, then names each object it could not remove once", async () => {
    const e = fakeEngine(
      [
        { id: "a", name: "p-task-a" },
        {
          id: "b",
          name: "p-task-b",
          fails: { statusCode: 500, message: "driver failed to remove root filesystem" },
        },
        { id: "c", name: "p-task-c" },
      ],
      {
        networks: ["p-net", "p-task-t1-net"],
        volumes: ["p-vol"],
        networkFails: {
          "p-net": { statusCode: 403, message: "error while removing network: p-net has active endpoints" },
        },
      },
    );
    const err = await offSwitch(e.docker, "p").catch((x: unknown) => x);
    expect(err).toBeInstanceOf(OffSwitchError);
    const off = err as OffSwitchError;
    expect(off.report).toEqual({
      project: "p",
      containers: ["p-task-a", "p-task-c"],
      networks: ["p-task-t1-net"],
      volumes: ["p-vol"],
    });
    expect(off.failures).toEqual([
      { kind: "container", name: "p-task-b", message: "driver failed to remove root filesystem" },
      { kind: "network", name: "p-net", message: "error while removing network: p-net has active endpoints" },
    ]);
    expect(off.message).toBe(
      [
        "the off switch of project p left 2 object(s) it could not remove:",
        "  - container p-task-b: driver failed to remove root filesystem",
        "  - network p-net: error while removing network: p-net has active endpoints",
      ].join("\n"),
    );
    // Tried once, not retried by the next sweep.
    expect(e.calls.filter((c) => c === "remove container b force=true v=true")).toHaveLength(1);
  });

  it.each([
    [0, `offSwitch: concurrency 0 must be a whole number ≥ 1 or Infinity (default ${OFF_CONCURRENCY})`],
    [2.5, `offSwitch: concurrency 2.5 must be a whole number ≥ 1 or Infinity (default ${OFF_CONCURRENCY})`],
    [
      Number.NaN,
      `offSwitch: concurrency NaN must be a whole number ≥ 1 or Infinity (default ${OFF_CONCURRENCY})`,
    ],
  ])("refuses concurrency %s before touching the engine", async (concurrency, message) => {
    const e = fakeEngine(many(1));
    await expect(offSwitch(e.docker, "p", { concurrency })).rejects.toThrow(message);
    expect(e.calls).toEqual([]);
  });

  it.each([
    ["", 'offSwitch: project "" must be a project name (a non-empty string without spaces, "=" or ",")'],
    [
      "a=b",
      'offSwitch: project "a=b" must be a project name (a non-empty string without spaces, "=" or ",")',
    ],
  ])("refuses project %j before touching the engine", async (project, message) => {
    const e = fakeEngine(many(1));
    await expect(offSwitch(e.docker, project)).rejects.toThrow(message);
    expect(e.calls).toEqual([]);
  });
});
