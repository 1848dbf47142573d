#!/usr/bin/env node
/**
 * `sandbox`, the installed front: `./sandbox` of a checkout, run in a team's own folder. It reads
 * `Pulumi.<stack>.yaml` there (else `stacks/Pulumi.<stack>.yaml`) and runs `check`, the stack verbs (`preview`, `up`,
 * `refresh`, `destroy`), the task verbs (`run`, `probe`, `escape`, `off`) and `scan`. The stack verbs run the
 * package's compiled program inline through the Automation API, with the package's policy pack and, where no
 * official Docker plugin is installed, the package's local Docker provider; the state is the folder's own.
 */
import { enableCompileCache } from "node:module";

// Node keeps the compiled code of the modules loaded below, so every run after the first starts faster.
enableCompileCache?.();
// The Docker client without the BuildKit and SSH parts the front never uses (cli/lean-docker.ts).
(require("../lean-docker") as typeof import("../lean-docker")).leanDockerClient();
const { EXIT, main } = require("../main") as typeof import("../main");
const { TOOLCHAIN } = require("../../toolchain/manifest") as typeof import("../../toolchain/manifest");

const argv = process.argv.slice(2);
const io = (require("../output") as typeof import("../output")).processIo();

/** Where the installed front differs from a checkout's, said after its usage. */
const INSTALLED = [
  "installed from the package, sandbox runs in the folder you run it in:",
  "  stack file  ./Pulumi.<stack>.yaml, else ./stacks/Pulumi.<stack>.yaml (the `sandbox:` config of the README)",
  "  state       ./.sandbox/state, or PULUMI_BACKEND_URL; the Pulumi home ./.sandbox/pulumi-home, or PULUMI_HOME",
  "  passphrase  PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE, else a dev passphrase",
  `  engine      the \`pulumi\` on PATH, v${TOOLCHAIN.MIN_PULUMI_VERSION} or later (the package cannot build one: exit 3)`,
  "  program     the package's, with its policy pack and, where no official Docker plugin is installed, its own",
  "              Docker provider",
  "  test        the toolkit's own suite runs from a checkout only (./sandbox test)",
  "",
].join("\n");

if (argv[0] === "test") {
  io.err(
    "sandbox test: the toolkit's own test suite runs from a checkout (./sandbox test); the package holds no tests\n",
  );
  process.exitCode = EXIT.badInput;
} else {
  main(argv, io, process.cwd()).then(
    (code) => {
      if (["help", "--help", "-h"].includes(argv[0] ?? "help") && argv.length <= 1) io.out(`\n${INSTALLED}`);
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
