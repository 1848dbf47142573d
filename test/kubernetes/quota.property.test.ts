import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quotaHard, quotaPlan } from "../../components/kubernetes/quota";
import { BudgetSchema, resolveProject, SpecError } from "../../components/model";

/** Parses the quota's own quantities back, as the API server would: `1500m` CPU, `512Mi` memory. */
const cpu = (q: string) => (q.endsWith("m") ? Number(q.slice(0, -1)) / 1000 : Number(q));
const mib = (q: string) => Number(q.replace(/Mi$/, ""));

const template = fc.record({
  vcpu: fc.integer({ min: 1, max: 6400 }).map((n) => n / 100),
  memoryMb: fc.integer({ min: 16, max: 262_144 }),
  diskMb: fc.integer({ min: 16, max: 65_536 }),
});

describe("the budget-derived quota (property)", () => {
  it("never admits a worst case above the cap, for any budget and template sizes", () => {
    fc.assert(
      fc.property(
        fc.record({
          cap: fc.integer({ min: 0, max: 5_000_000 }).map((c) => c / 100),
          cpuRate: fc.integer({ min: 0, max: 1000 }).map((r) => r / 10_000),
          memRate: fc.integer({ min: 0, max: 1000 }).map((r) => r / 10_000),
          hours: fc.integer({ min: 1, max: 744 }),
          fixed: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
          enabled: fc.boolean(),
        }),
        fc.array(template, { minLength: 1, maxLength: 4 }),
        (b, sizes) => {
          const templates = Object.fromEntries(
            sizes.map((s, i) => [`t${i}`, { image: "x:1", resources: { ...s, tmpfsMb: 1 } }]),
          );
          const budget = {
            monthlyCapUsd: b.cap,
            usdPerVcpuHour: b.cpuRate,
            usdPerGbHour: b.memRate,
            hoursPerMonth: b.hours,
            ...(b.fixed === undefined ? {} : { maxConcurrentTasks: b.fixed }),
          };
          let resolved: ReturnType<typeof resolveProject>;
          try {
            resolved = resolveProject({ name: "p", enabled: b.enabled, budget, templates });
          } catch (e) {
            // A refusal is always a SpecError with the arithmetic, and only when the project is enabled.
            expect(e).toBeInstanceOf(SpecError);
            expect((e as Error).message).toMatch(/worst case .* > cap \$/);
            expect(b.enabled).toBe(true);
            return;
          }
          const hard = quotaHard(quotaPlan(resolved.budget.concurrency, resolved.slot, resolved.spec.budget));
          const b2 = BudgetSchema.parse(budget);
          const admittedWorstCase =
            (cpu(hard["limits.cpu"] ?? "0") * b2.usdPerVcpuHour +
              (mib(hard["limits.memory"] ?? "0") / 1024) * b2.usdPerGbHour) *
            b2.hoursPerMonth;
          expect(admittedWorstCase).toBeLessThanOrEqual(b2.monthlyCapUsd + 1e-6);
          // Every template fits the quota at least once when any task is allowed.
          if (resolved.budget.concurrency > 0) {
            for (const t of Object.values(resolved.spec.templates)) {
              expect(t.resources.vcpu).toBeLessThanOrEqual(cpu(hard["limits.cpu"] ?? "0") + 1e-9);
              expect(t.resources.memoryMb).toBeLessThanOrEqual(mib(hard["limits.memory"] ?? "0"));
            }
          } else {
            expect(hard["count/pods"]).toBe("0");
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("admits zero when the cap admits no task (the edge)", () => {
    const plan = quotaPlan(
      0,
      { vcpu: 1, memoryMb: 1024, diskMb: 1024 },
      BudgetSchema.parse({ monthlyCapUsd: 0 }),
    );
    expect(quotaHard(plan)).toMatchObject({
      "limits.cpu": "0m",
      "limits.memory": "0Mi",
      "count/jobs.batch": "0",
    });
  });
});
