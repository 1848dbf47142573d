/**
 * sandbox-require-job-lifecycle: a Job (or a CronJob's job) is one-shot. Kubernetes retries a failed pod
 * `backoffLimit` times (6 when absent), runs it with no deadline unless `activeDeadlineSeconds` says, and keeps the
 * finished Job and its pods forever unless `ttlSecondsAfterFinished` says. Only Job carriers have these fields.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-job-lifecycle";
type Obj = Record<string, unknown>;

/** The JobSpec of a Job or CronJob carrier's props. */
function jobSpec(kind: string, props: Obj): Obj {
  const spec = props.spec as Obj;
  return kind === "CronJob" ? ((spec.jobTemplate as Obj).spec as Obj) : spec;
}
function props(kind: string, edit: (job: Obj) => void): Obj {
  const p = carrier(kind).build(safePodSpec());
  edit(jobSpec(kind, p));
  return p;
}
function run(kind: string, edit: (job: Obj) => void = () => {}, config?: object): Outcome {
  return validate(
    carrier(kind).type,
    props(kind, edit),
    config === undefined ? {} : { config: { [RULE]: config } },
  );
}
const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const unset = (key: string) => (j: Obj) => {
  delete j[key];
};
const set = (key: string, value: unknown) => (j: Obj) => {
  j[key] = value;
};

const JOBS = ["Job", "CronJob"] as const;

describe(RULE, () => {
  it.each(JOBS)("passes the hardened %s (backoffLimit 0, a deadline, a ttl)", (kind) => {
    expect(violated(run(kind))).not.toContain(RULE);
  });

  it("does not judge carriers without a Job spec, nor Docker", () => {
    for (const kind of ["Pod", "Deployment"]) {
      const c = carrier(kind);
      expect(violated(validate(c.type, c.build(safePodSpec()))), kind).not.toContain(RULE);
    }
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
  });

  const failing: [string, (j: Obj) => void, RegExp][] = [
    [
      "no backoffLimit (6 retries)",
      unset("backoffLimit"),
      /backoffLimit is not set, so a failed task is retried 6 times/,
    ],
    ["backoffLimit 1", set("backoffLimit", 1), /backoffLimit is 1, above the maximum 0/],
    ["backoffLimit 6", set("backoffLimit", 6), /backoffLimit is 6, above the maximum 0/],
    [
      "no activeDeadlineSeconds",
      unset("activeDeadlineSeconds"),
      /activeDeadlineSeconds is not set, so the job has no deadline/,
    ],
    [
      "activeDeadlineSeconds above a day",
      set("activeDeadlineSeconds", 86_401),
      /activeDeadlineSeconds is 86401, above the maximum 86400/,
    ],
    [
      "no ttlSecondsAfterFinished",
      unset("ttlSecondsAfterFinished"),
      /ttlSecondsAfterFinished is not set, so finished jobs are never cleaned up/,
    ],
  ];

  describe.each(JOBS)("on a %s", (kind) => {
    it.each(failing)("refuses %s", (_, edit, re) => {
      const m = mine(run(kind, edit));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
    });
  });

  it("reports each missing field once, all three together", () => {
    const m = mine(
      run("Job", (j) => {
        for (const k of ["backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"]) delete j[k];
      }),
    );
    expect(m).toHaveLength(3);
  });

  it.each([
    ["backoffLimit 0, the default maximum", set("backoffLimit", 0)],
    ["activeDeadlineSeconds at the maximum", set("activeDeadlineSeconds", 86_400)],
    ["a short activeDeadlineSeconds", set("activeDeadlineSeconds", 1)],
    ["ttlSecondsAfterFinished 0 (cleaned up at once)", set("ttlSecondsAfterFinished", 0)],
    ["a long ttlSecondsAfterFinished (no maximum)", set("ttlSecondsAfterFinished", 604_800)],
  ])("passes %s", (_, edit) => {
    for (const kind of JOBS) expect(violated(run(kind, edit)), kind).not.toContain(RULE);
  });

  describe("config", () => {
    it("maxBackoffLimit allows that many retries and no more", () => {
      expect(violated(run("Job", set("backoffLimit", 3), { maxBackoffLimit: 3 }))).not.toContain(RULE);
      const m = mine(run("Job", set("backoffLimit", 4), { maxBackoffLimit: 3 }));
      expect(m).toEqual([expect.stringMatching(/backoffLimit is 4, above the maximum 3/)]);
      // An absent backoffLimit is 6, whatever the maximum.
      expect(mine(run("Job", unset("backoffLimit"), { maxBackoffLimit: 10 }))).toHaveLength(1);
    });

    it("maxActiveDeadlineSeconds is the longest deadline", () => {
      const cfg = { maxActiveDeadlineSeconds: 600 };
      expect(violated(run("CronJob", set("activeDeadlineSeconds", 600), cfg))).not.toContain(RULE);
      expect(mine(run("CronJob", set("activeDeadlineSeconds", 601), cfg))).toEqual([
        expect.stringMatching(/activeDeadlineSeconds is 601, above the maximum 600/),
      ]);
    });
  });

  it.each([
    ["backoffLimit", "backoffLimit"],
    ["activeDeadlineSeconds", "activeDeadlineSeconds"],
    ["ttlSecondsAfterFinished", "ttlSecondsAfterFinished"],
  ])("notes %s not known until the update instead of refusing it", (_, key) => {
    const o = run("Job", set(key, UNKNOWN_WIRE));
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });

  describe("scan", () => {
    const manifest = (kind: string, edit: (j: Obj) => void) =>
      JSON.stringify({ ...props(kind, edit), apiVersion: "batch/v1", kind, metadata: { name: "task" } });
    async function scanned(kind: string, edit: (j: Obj) => void) {
      const dir = tempFiles({ "job.yaml": manifest(kind, edit) });
      const { report } = await scanJson(["job.yaml"], undefined, dir);
      expect(report.resources.map((r) => r.name)).toContain("task");
      return { rules: rulesOf(report, "task"), messages: violationsOf(report, "task") };
    }

    it("refuses a Job manifest without ttlSecondsAfterFinished, naming where it belongs", async () => {
      const { messages } = await scanned("Job", unset("ttlSecondsAfterFinished"));
      expect(messages).toContainEqual(
        expect.stringMatching(/never cleaned up \[spec\.ttlSecondsAfterFinished\]$/),
      );
    });

    it("refuses a CronJob manifest whose job retries, at the job template", async () => {
      const { messages } = await scanned("CronJob", set("backoffLimit", 6));
      expect(messages).toContainEqual(
        expect.stringMatching(
          /backoffLimit is 6, above the maximum 0 \[spec\.jobTemplate\.spec\.backoffLimit\]$/,
        ),
      );
    });

    it("passes the hardened Job and CronJob manifests", async () => {
      for (const kind of JOBS) expect((await scanned(kind, () => {})).rules, kind).not.toContain(RULE);
    });
  });
});
