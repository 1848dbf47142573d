/**
 * Every resource type of the installed provider SDKs (generated from the providers' schemas; each class names its
 * type token in `__pulumiType`) has a verdict, and every verdict names a type they have and rules that exist; a
 * refused type fails closed as an object the rules cannot judge.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_RULES } from "../../../../policy/rules/registry";
import { PULUMI_PROVIDER_PACKAGES, PULUMI_TYPE_VERDICTS } from "../../../../policy/sources/pulumi/types";
import { adaptResources } from "../../../../policy/sources/subject";
import { ALL_STACK_RULES } from "../../../../policy/stack/registry";

const ROOT = join(__dirname, "..", "..", "..", "..");

function typesOf(pkg: string): { version: string; types: string[] } {
  const dir = join(ROOT, "node_modules", pkg);
  const version = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string })
    .version;
  const types = new Set<string>();
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (f === "node_modules" || f === "types") continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith(".js"))
        for (const m of readFileSync(p, "utf8").matchAll(/__pulumiType = '([^']+:[^']+)'/g))
          types.add(m[1] as string);
    }
  };
  walk(dir);
  return { version, types: [...types].sort() };
}

const installed = Object.entries(PULUMI_PROVIDER_PACKAGES).map(([pkg, v]) => ({
  pkg,
  want: v,
  ...typesOf(pkg),
}));

describe("the Pulumi provider type table", () => {
  it("covers the SDK versions installed", () => {
    expect(installed.map((i) => [i.pkg, i.version])).toEqual(installed.map((i) => [i.pkg, i.want]));
    for (const i of installed) expect(i.types.length, i.pkg).toBeGreaterThan(0);
  });

  it("gives every resource type a verdict and names only types the SDKs have", () => {
    const all = installed.flatMap((i) => i.types);
    expect(all.filter((t) => PULUMI_TYPE_VERDICTS[t] === undefined)).toEqual([]);
    expect(Object.keys(PULUMI_TYPE_VERDICTS).filter((t) => !all.includes(t))).toEqual([]);
    const ids = new Set([...ALL_RULES, ...ALL_STACK_RULES].map((r) => r.id));
    expect(
      Object.values(PULUMI_TYPE_VERDICTS).flatMap((v) =>
        v.v === "judged" ? v.rules.filter((r) => !ids.has(r)) : [],
      ),
    ).toEqual([]);
  });

  it.each(Object.entries(PULUMI_TYPE_VERDICTS).filter(([, v]) => v.v === "refused"))(
    "%s is refused as unjudged",
    (type) => {
      const views = adaptResources(type, {}, "r");
      expect(views.map((v) => v.subject)).toEqual(["unjudged"]);
    },
  );

  it.each(Object.entries(PULUMI_TYPE_VERDICTS).filter(([, v]) => v.v === "inert"))(
    "%s is no workload",
    (type) => {
      expect(adaptResources(type, { name: "x" }, "r")).toEqual([]);
    },
  );
});
