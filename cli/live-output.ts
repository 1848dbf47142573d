/**
 * A task's output shown as it is written (`run` without `--json`): on a terminal line by line behind the gutter with
 * its control bytes written out (cli/output.ts `taskOutput`), to a pipe or file as written.
 */
import type { OutputSink } from "../runtime/docker/follow";
import { type Io, taskOutput } from "./output";

export interface LiveOutput {
  readonly sink: OutputSink;
  /** Writes what is left of an unfinished last line (a terminal's gutter needs whole lines). */
  flush(): void;
}

export function liveOutput(io: Io): LiveOutput {
  const write = { stdout: io.out, stderr: io.err };
  const terminal = { stdout: io.terminal?.out === true, stderr: io.terminal?.err === true };
  const partial = { stdout: "", stderr: "" };
  return {
    sink(stream, text) {
      if (!terminal[stream]) {
        write[stream](text);
        return;
      }
      const whole = partial[stream] + text;
      const cut = whole.lastIndexOf("\n");
      if (cut < 0) {
        partial[stream] = whole;
        return;
      }
      partial[stream] = whole.slice(cut + 1);
      write[stream](taskOutput(whole.slice(0, cut + 1), true));
    },
    flush() {
      for (const stream of ["stdout", "stderr"] as const) {
        if (partial[stream] !== "") write[stream](taskOutput(partial[stream], true));
        partial[stream] = "";
      }
    },
  };
}
