/**
 * A task's log as the engine keeps it: at most this many files of this many MiB, the oldest dropped first (Docker's
 * `json-file` driver with `max-size` and `max-file`). Neither the host's disk nor the launcher's memory grows with
 * what a task prints: the launcher reads back at most {@link TASK_OUTPUT_MAX_BYTES}.
 */
export const TASK_LOG_FILE_MB = 8;
export const TASK_LOG_FILES = 2;
/** The most of a task's output (stdout and stderr) the launcher reads back: the last bytes the engine kept. */
export const TASK_OUTPUT_MAX_BYTES = TASK_LOG_FILE_MB * TASK_LOG_FILES * 1024 * 1024;
