import { describe, expect, it } from "vitest";
import { LABELS, projectLabels } from "../../components/model";

describe("projectLabels", () => {
  it("labels every object with the project, its role and the toolkit", () => {
    expect(projectLabels("demo", "network")).toEqual({
      "sandbox.managed-by": "sandbox-projects",
      "sandbox.project": "demo",
      "sandbox.role": "network",
    });
  });

  it("adds the template and the spec hash when given, keys sorted", () => {
    const labels = projectLabels("demo", "task", "web", "0123456789abcdef");
    expect(Object.keys(labels)).toEqual([
      LABELS.managedBy,
      LABELS.project,
      LABELS.role,
      LABELS.specHash,
      LABELS.template,
    ]);
    expect(labels).toEqual({
      "sandbox.managed-by": "sandbox-projects",
      "sandbox.project": "demo",
      "sandbox.role": "task",
      "sandbox.spec-hash": "0123456789abcdef",
      "sandbox.template": "web",
    });
  });
});
