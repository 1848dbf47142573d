import { describe, expect, it } from "vitest";
import { launchSpec, resolveProject, SpecError } from "../../components/model";

/** A $10 cap at the default rates: 2 slots of the default template fit all month ($7.30). */
const base = { name: "demo", budget: { monthlyCapUsd: 10 } };
const image = "sandbox-busybox:1";

const messageOf = (input: unknown) => {
  try {
    resolveProject(input);
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return (e as Error).message;
  }
  throw new Error("expected a refusal");
};

describe("a template's pool", () => {
  it("is carried to the launch spec with its idle limit, and is not part of the template's version", () => {
    const pooled = resolveProject({ ...base, templates: { t: { image, pool: { size: 2 } } } });
    const plain = resolveProject({ ...base, templates: { t: { image } } });
    const spec = launchSpec(pooled, "t", "net");
    expect(spec.pool).toEqual({ size: 2, maxIdleSeconds: 600 });
    expect(launchSpec(plain, "t", "net").pool).toBeUndefined();
    expect(spec.specHash).toBe(launchSpec(plain, "t", "net").specHash);
  });

  it("refuses pools that hold more slots than the budget allows at once, with the arithmetic", () => {
    const message = messageOf({
      ...base,
      templates: { a: { image, pool: { size: 1 } }, b: { image, pool: { size: 2 } } },
    });
    expect(message).toContain("templates.b.pool.size");
    expect(message).toContain(
      "pools hold 1 + 2 = 3 slots, each started all month, but the budget allows 2 at once (2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30)",
    );
    // Exactly the concurrency fits.
    expect(() =>
      resolveProject({
        ...base,
        templates: { a: { image, pool: { size: 1 } }, b: { image, pool: { size: 1 } } },
      }),
    ).not.toThrow();
  });

  it("refuses a pool where tasks cannot wait started: a network per task, or Kubernetes", () => {
    const proxy = messageOf({
      ...base,
      templates: { p: { image, pool: { size: 1 }, egress: { mode: "proxy", allow: ["example.com"] } } },
    });
    expect(proxy).toContain("templates.p.pool");
    expect(proxy).toContain("egress mode proxy");
    const kube = messageOf({
      ...base,
      backend: "kubernetes",
      templates: { k: { image, pool: { size: 1 } } },
    });
    expect(kube).toContain("templates.k.pool");
    expect(kube).toContain("pre-started pool members run on the Docker backend only");
  });

  it("names the key, the value and what is allowed for a bad pool", () => {
    for (const [pool, said] of [
      [{ size: 0 }, "pool.size must be a whole number between 1 and 1000"],
      [{ size: 1.5 }, "pool.size must be a whole number between 1 and 1000"],
      [{ size: "2" }, "pool.size must be a whole number between 1 and 1000"],
      [{ size: 1, maxIdleSeconds: 1 }, "pool.maxIdleSeconds must be a whole number between 10 and 86400"],
      [{ size: 1, warm: true }, "warm"],
      [{}, "pool.size must be a whole number between 1 and 1000"],
    ] as const) {
      const message = messageOf({ ...base, templates: { t: { image, pool } } });
      expect(message).toContain("templates.t.pool");
      expect(message).toContain(said);
    }
  });
});
