#!/usr/bin/env node
/**
 * `sandbox-scan`, the installed scanner: `sandbox-scan [options] <file | folder | ->...` (`--help` lists the options).
 * Exit codes: 0 no mandatory rule fails, 1 one does, 2 bad input.
 */
import { enableCompileCache } from "node:module";

// Node keeps the compiled code of the modules loaded below, so every run after the first starts faster.
enableCompileCache?.();
const { runScan } = require("../scan") as typeof import("../scan");

runScan(
  process.argv.slice(2),
  { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) },
  { cwd: process.cwd() },
).then((code) => {
  process.exitCode = code;
});
