/**
 * The stack verbs past the front's checks (cli/main.ts): `up` refused at the cap, `check`'s plan, and `preview`,
 * `up`, `refresh` and `destroy` through the engine. Loaded when one of them runs: the task verbs never load it.
 */
import { admissionWarnings, type ResolvedProject, type SpecError } from "../components/model";
import { isLedgerProblem } from "../runtime/ledger/errors";
import type { StackVerb } from "./engine-run";
import { EXIT } from "./main";
import type { Io, Reporter } from "./output";
import { describePlan } from "./plan";
import { rawConfig } from "./targets";

export interface StackVerbContext {
  readonly verb: string;
  readonly stack: string;
  /** The stack's project; none when its config is invalid (destroy then works from the state alone). */
  readonly project: ResolvedProject | undefined;
  readonly invalid: SpecError | undefined;
  readonly rep: Reporter;
  readonly io: Io;
  readonly json: boolean;
  readonly diff: boolean;
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  /** The project's ledger file. */
  readonly ledgerAt: (stack: string, project: ResolvedProject) => string;
  /** A note that the stack's config is invalid, and what runs anyway. */
  readonly invalidNote: (what: string) => string;
}

export async function stackVerb(ctx: StackVerbContext): Promise<number> {
  const { verb, stack, project, invalid, rep, io, json, diff, root, env, invalidNote } = ctx;
  const file = ctx.ledgerAt;
  if (verb === "up" && project !== undefined && project.spec.enabled) {
    // At the cap, `up` is refused until the cap is raised or the month turns (a metered project's hard stop). The
    // hard stop itself (`enabled: false`) always deploys: it starts nothing and spends nothing.
    const { upRefusal } = await import("./ledger.js");
    let refusal: string | undefined;
    try {
      refusal = await upRefusal(file(stack, project), project, io.err);
    } catch (e) {
      // A ledger that does not answer cannot say the project is under its cap: nothing is deployed.
      if (!isLedgerProblem(e)) throw e;
      return rep.failure({
        verb,
        stack,
        ok: false,
        exitCode: EXIT.failed,
        error: { kind: "ledger", message: `${e.message}. Nothing was deployed.` },
      });
    }
    if (refusal !== undefined) {
      return rep.failure({
        verb,
        stack,
        ok: false,
        exitCode: EXIT.failed,
        error: { kind: "budget", message: `${refusal}. Nothing was deployed.` },
      });
    }
  }
  // What the ledger could never admit is said with the plan, before anything is deployed.
  if (project !== undefined) for (const w of admissionWarnings(project)) rep.warning(w);
  if (verb === "check" && project !== undefined) {
    return rep.result(
      { verb, stack, ok: true, exitCode: EXIT.ok, project: project.spec.name, budget: project.budget },
      describePlan(stack, project),
    );
  }
  if (project !== undefined && !json) io.err(`${describePlan(stack, project)}\n`);
  const backend =
    project?.spec.backend ??
    (rawConfig(root, stack)?.["sandbox:backend"] === "kubernetes" ? "kubernetes" : "docker");
  const toolchain = await (await import("./engine-host.js")).toolsFor(
    verb as StackVerb,
    stack,
    root,
    backend,
    env,
  );
  if ("error" in toolchain)
    return rep.failure({ verb, stack, ok: false, exitCode: EXIT.missingTool, ...toolchain });
  const { stateOnlyWorkDir } = await import("./engine-env.js");
  const stateOnly = project === undefined ? stateOnlyWorkDir(root, stack) : undefined;
  if (stateOnly !== undefined) {
    const noFile = invalid?.problems[0]?.message.startsWith("no such stack config file") === true;
    rep.note(
      noFile
        ? `stack ${stack} has no config file; destroy works from the stack's state alone`
        : invalidNote("destroy works from the stack's state alone"),
    );
  }
  try {
    const options = {
      reporter: rep,
      env,
      diff,
      ...(stateOnly === undefined ? {} : { workDir: stateOnly.dir }),
    };
    if (verb === "destroy") {
      // The off switch's plain path drives the CLI without loading the Pulumi SDK (cli/destroy.ts).
      const { directDestroy } = await import("./destroy.js");
      const done = await directDestroy(stack, root, toolchain, options);
      if (done !== undefined) return done;
    }
    const { runStackVerb } = await import("./engine.js");
    const code = await runStackVerb(verb as StackVerb, stack, root, toolchain, options);
    if (verb === "up" && code === EXIT.ok && project !== undefined)
      await (await import("./ledger.js")).recordUp(file(stack, project), project, io.err);
    return code;
  } finally {
    stateOnly?.cleanup();
  }
}
