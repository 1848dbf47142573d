/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: Compose interpolation is the subject */
// What scan assumed to read a Compose file is stated in every report format, so a verdict is never silently
// conditional on an environment the reader cannot see.
import { describe, expect, it } from "vitest";
import { scan, scanJson, tempFiles } from "./helpers";

const COMPOSE = 'services:\n  app:\n    image: busybox\n    privileged: ${PRIV:-false}\n    user: "${U}"\n';

describe("assumptions", () => {
  const dir = tempFiles({ "compose.yaml": COMPOSE, ".env": "U=1000:1000\n" });

  it("lists each interpolated variable and where its value came from, once, in the JSON report", async () => {
    const { report } = await scanJson(["compose.yaml"], undefined, dir);
    expect(report.assumptions).toEqual([
      { file: "compose.yaml", statement: "${PRIV} is not set: read as its default or an empty string" },
      { file: "compose.yaml", statement: "${U} taken from .env" },
    ]);
  });

  it("prints them in the text report and as SARIF notes", async () => {
    const text = await scan(["compose.yaml"], undefined, dir);
    expect(text.out).toContain(
      "assumed (the verdict holds for these values):\n" +
        "  compose.yaml: ${PRIV} is not set: read as its default or an empty string\n" +
        "  compose.yaml: ${U} taken from .env\n",
    );
    const sarif = await scan(["--format", "sarif", "compose.yaml"], undefined, dir);
    const notes = (
      JSON.parse(sarif.out) as {
        runs: {
          invocations: { toolExecutionNotifications: { level: string; message: { text: string } }[] }[];
        }[];
      }
    ).runs[0]?.invocations[0]?.toolExecutionNotifications.map((n) => `${n.level}: ${n.message.text}`);
    expect(notes).toContain("note: assumed: ${U} taken from .env");
  });

  it("is empty for inputs that need no assumption", async () => {
    const plain = tempFiles({ "c.yaml": "services:\n  app:\n    image: busybox\n" });
    expect((await scanJson(["c.yaml"], undefined, plain)).report.assumptions).toEqual([]);
  });
});
