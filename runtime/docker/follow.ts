/**
 * A running task's output as it is written: the engine's log of the container, followed from its start and split
 * into stdout and stderr, handed on as text (UTF-8 never cut inside a character). At most `maxBytes` of each stream
 * is handed on; the rest is only counted, so a flood never grows the launcher. The result read at the end (bounded
 * too) is unchanged.
 */

import { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type Dockerode from "dockerode";

/** Where a task's live output goes, one piece at a time. */
export type OutputSink = (stream: "stdout" | "stderr", text: string) => void;

export interface FollowedOutput {
  /** Settles once the engine's log stream ended (the container stopped), or at once after `stop()`. */
  readonly done: Promise<void>;
  /** Bytes of each stream not handed on (past `maxBytes`). */
  readonly dropped: { stdout: number; stderr: number };
  stop(): void;
}

/** Follows `container`'s output into `sink` until the container ends or `stop()` is called. */
export function followOutput(
  container: Dockerode.Container,
  sink: OutputSink,
  maxBytes: number,
): FollowedOutput {
  const dropped = { stdout: 0, stderr: 0 };
  const passed = { stdout: 0, stderr: 0 };
  let source: (NodeJS.ReadableStream & { destroy?: () => void }) | undefined;
  let stopped = false;
  const writer = (stream: "stdout" | "stderr") => {
    const decoder = new StringDecoder("utf8");
    return new Writable({
      write(chunk: Buffer, _encoding, done) {
        const room = Math.max(0, maxBytes - passed[stream]);
        const kept = chunk.subarray(0, room);
        passed[stream] += kept.length;
        dropped[stream] += chunk.length - kept.length;
        if (kept.length > 0) {
          const text = decoder.write(kept);
          if (text !== "") sink(stream, text);
        }
        done();
      },
    });
  };
  const done = (async () => {
    try {
      const s = (await container.logs({
        follow: true,
        stdout: true,
        stderr: true,
      })) as unknown as NodeJS.ReadableStream & { destroy?: () => void };
      source = s;
      if (stopped) {
        s.destroy?.();
        return;
      }
      await new Promise<void>((resolve) => {
        container.modem.demuxStream(s, writer("stdout"), writer("stderr"));
        s.on("end", resolve);
        s.on("close", resolve);
        s.on("error", () => resolve());
      });
    } catch {
      // The live view is a convenience: the result read at the end still holds the output.
    }
  })();
  return {
    done,
    dropped,
    stop() {
      stopped = true;
      source?.destroy?.();
    },
  };
}
