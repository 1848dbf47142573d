#!/usr/bin/env node
/**
 * `sandbox`, the installed front. It reads `stacks/Pulumi.<stack>.yaml` in the folder it runs in and runs `check`,
 * the task verbs (`run`, `probe`, `escape`, `off`) and `scan` as `./sandbox` does in a checkout. The stack verbs
 * (`preview`, `up`, `refresh`, `destroy`) deploy the checkout's own program; from the package, a team deploys its
 * own Pulumi program with the package's components and policy pack instead (docs/quickstart-components.md).
 */
import { enableCompileCache } from "node:module";

// Node keeps the compiled code of the modules loaded below, so every run after the first starts faster.
enableCompileCache?.();
const { EXIT, main } = require("../main") as typeof import("../main");

/** The verbs that need a checkout: they run the toolkit's own stack program with the checkout's pack. */
const CHECKOUT_VERBS = ["preview", "up", "refresh", "destroy", "test"];

const argv = process.argv.slice(2);
const io = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t) };

/** Where the installed front differs from a checkout's, said after its usage and when a checkout verb is asked for. */
const INSTALLED = [
  "installed from the package, sandbox runs check, run, probe, escape, off and scan on stacks/Pulumi.<stack>.yaml",
  "in this folder; preview, up, refresh, destroy and test run from a checkout (./sandbox). Deploy your own Pulumi",
  "program with the package's components and policy pack:",
  "  pulumi up --policy-pack node_modules/@sandbox-projects/toolkit/policy-pack",
  "",
].join("\n");

if (CHECKOUT_VERBS.includes(argv[0] ?? "")) {
  io.err(`sandbox ${argv[0]}: ${INSTALLED}`);
  process.exitCode = EXIT.badInput;
} else {
  main(argv, io, process.cwd()).then(
    (code) => {
      if (["help", "--help", "-h"].includes(argv[0] ?? "help")) io.out(`\n${INSTALLED}`);
      process.exitCode = code;
    },
    (e: unknown) => {
      // As the checkout's front: one message (one JSON document with --json), never a stack trace.
      const message = `internal error: ${e instanceof Error ? e.message : String(e)}`;
      if (argv.includes("--json")) {
        io.out(
          `${JSON.stringify({ verb: argv[0] ?? "", ok: false, exitCode: EXIT.failed, error: { kind: "internal", message } })}\n`,
        );
      } else io.err(`${message}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
