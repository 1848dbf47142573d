// Each test file's temp folder is its run's own (test/global-setup.ts), removed at the run's end: `os.tmpdir()` reads
// TMPDIR on every call, and the processes a test starts inherit it.
import { inject } from "vitest";

process.env.TMPDIR = inject("runTempDir");
