/**
 * The generated tables (Engine API, Compose) are what the generator writes from the pinned modules
 * (toolchain/schemas.sh --check, which builds and runs the generator with Go), and the pins are the toolchain
 * manifest's.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMPOSE_SPEC } from "../../../../policy/sources/compose/schema.generated";
import { DAEMON } from "../../../../policy/sources/docker/daemon.generated";
import { ENGINE_API } from "../../../../policy/sources/docker/schema.generated";
import { DEFAULT_SECCOMP } from "../../../../policy/sources/docker/seccomp.generated";
import { CRD_SCHEMAS } from "../../../../policy/sources/kubernetes/crds.generated";
import { KUBERNETES_API } from "../../../../policy/sources/kubernetes/schema.generated";
import { TOOLCHAIN } from "../../../../toolchain/manifest";
import { goEnvironment } from "../../../helpers/goOracle";

const ROOT = join(__dirname, "..", "..", "..", "..");

describe("the generated Engine API schema", () => {
  it("is pinned by the toolchain manifest, in the generator's go.mod and the table alike", () => {
    const version = TOOLCHAIN.MOBY_API_VERSION;
    const goMod = readFileSync(join(ROOT, "toolchain", "schemas", "go.mod"), "utf8");
    expect(goMod).toMatch(
      new RegExp(`^\\s*github\\.com/moby/moby/api ${version.replace(/\./g, "\\.")}$`, "m"),
    );
    expect(ENGINE_API.version).toBe(version);
    expect(ENGINE_API.apiVersion).toMatch(/^1\.\d+$/);
    const compose = TOOLCHAIN.COMPOSE_GO_VERSION;
    expect(goMod).toMatch(
      new RegExp(`github\\.com/compose-spec/compose-go/v2 ${compose.replace(/\./g, "\\.")}$`, "m"),
    );
    expect(COMPOSE_SPEC.version).toBe(compose);
    expect(goMod).toMatch(
      new RegExp(`github\\.com/moby/moby/v2 ${TOOLCHAIN.MOBY_DAEMON_VERSION.replace(/\./g, "\\.")}$`, "m"),
    );
    expect(DAEMON.version).toBe(TOOLCHAIN.MOBY_DAEMON_VERSION);
    expect(goMod).toMatch(
      new RegExp(
        `github\\.com/moby/profiles/seccomp ${TOOLCHAIN.MOBY_SECCOMP_VERSION.replace(/\./g, "\\.")}$`,
        "m",
      ),
    );
    expect(DEFAULT_SECCOMP.version).toBe(TOOLCHAIN.MOBY_SECCOMP_VERSION);
    expect(goMod).toMatch(
      new RegExp(`^\\s*k8s\\.io/api ${TOOLCHAIN.KUBE_API_VERSION.replace(/\./g, "\\.")}$`, "m"),
    );
    expect(KUBERNETES_API.version).toBe(TOOLCHAIN.KUBE_API_VERSION);
    // The operators' CRD schemas come from a module of their own, whose k8s.io/api may be newer.
    const crds = readFileSync(join(ROOT, "toolchain", "crds", "go.mod"), "utf8");
    for (const [key, operator] of [
      ["AGENT_SANDBOX_VERSION", "agent-sandbox"],
      ["KUBERAY_VERSION", "kuberay"],
      ["KUBEFLOW_TRAINER_VERSION", "kubeflow-trainer"],
      ["ARGO_WORKFLOWS_VERSION", "argo-workflows"],
      ["ARGO_ROLLOUTS_VERSION", "argo-rollouts"],
      ["SPARK_OPERATOR_VERSION", "spark-operator"],
      ["TEKTON_PIPELINE_VERSION", "tekton"],
      ["KNATIVE_SERVING_VERSION", "knative-serving"],
      ["KEDA_VERSION", "keda"],
    ] as const) {
      const { module, version } = CRD_SCHEMAS[operator];
      expect(version).toBe(TOOLCHAIN[key]);
      expect(crds).toMatch(
        new RegExp(`^\\s*${module.replace(/\./g, "\\.")} ${version.replace(/\./g, "\\.")}$`, "m"),
      );
    }
    const oracle = readFileSync(join(ROOT, "test", "oracles", "compose", "go.mod"), "utf8");
    expect(oracle).toMatch(
      new RegExp(`github\\.com/compose-spec/compose-go/v2 ${compose.replace(/\./g, "\\.")}$`, "m"),
    );
  });

  it("is what the generator writes (rerun toolchain/schemas.sh when this fails)", () => {
    const r = spawnSync("bash", [join(ROOT, "toolchain", "schemas.sh"), "--check"], {
      encoding: "utf8",
      env: goEnvironment(),
      timeout: 600_000,
    });
    // On a cold module cache Go says what it downloads; anything else on stderr (a stale table) is a failure.
    const said = r.stderr
      .split("\n")
      .filter((l) => l !== "" && !/^go: (downloading|finding|extracting) /.test(l));
    expect({ status: r.status, said }).toEqual({ status: 0, said: [] });
    // Cold, the generators compile the operators' API packages first: minutes on two loaded cores.
  }, 660_000);
});
