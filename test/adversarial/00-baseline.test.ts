/**
 * The safe objects every other case starts from pass, and their plain dangerous versions are blocked: a failure
 * elsewhere then means a spelling slipped past, not that the starting point was wrong.
 */
import { describe, it } from "vitest";
import { compose, deployment, engineBody, pod } from "./fixtures";
import { blocked, passes, verdict } from "./harness";

describe("baseline: the safe objects pass in their plain spellings", () => {
  it("a hardened Pod passes", async () => {
    await verdict({ "pod.yaml": pod("safe") }, passes);
  });
  it("a hardened Deployment (Helm output) passes", async () => {
    await verdict({ "deploy.yaml": deployment("safe") }, passes);
  });
  it("a hardened Compose service passes", async () => {
    await verdict({ "compose.yaml": compose("app") }, passes);
  });
  it("a hardened Engine API create body passes", async () => {
    await verdict({ "create.json": engineBody() }, passes);
  });
});

describe("baseline: the plain dangerous objects are blocked", () => {
  it("Pod with privileged: true", async () => {
    await verdict(
      { "pod.yaml": pod("bad", { containerSecurity: "privileged: true" }) },
      blocked("sandbox-disallow-privileged", "bad"),
    );
  });
  it("Compose service with privileged: true", async () => {
    await verdict(
      { "compose.yaml": compose("app", "privileged: true") },
      blocked("sandbox-disallow-privileged", "app"),
    );
  });
  it("Engine body with Privileged: true", async () => {
    await verdict(
      { "create.json": engineBody({}, { Privileged: true }) },
      blocked("sandbox-disallow-privileged"),
    );
  });
});
