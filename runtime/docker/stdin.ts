/**
 * A task's standard input on Docker (`run -i`): one attachment to the container's input, made before it starts (so
 * nothing is lost), fed from the caller's stream as it comes, and half-closed at its end, which closes the task's
 * input (`StdinOnce`). The task may stop reading early (it exits, or is stopped): what is left is dropped.
 */
import type Dockerode from "dockerode";

export interface TaskInput {
  /** Streams `source` to the task and closes its input when `source` ends. */
  feed(source: NodeJS.ReadableStream): void;
  /** Lets go of the attachment (the task ended). */
  close(): void;
}

/** Attaches to the created container's input; call before it starts. */
export async function attachInput(container: Dockerode.Container): Promise<TaskInput> {
  const socket = (await container.attach({
    stream: true,
    stdin: true,
    stdout: false,
    stderr: false,
    hijack: true,
  })) as NodeJS.ReadWriteStream & { destroy(): void };
  // A task that exits before reading everything: the engine closes the connection (EPIPE, reset); nothing to do.
  socket.on("error", () => undefined);
  return {
    feed(source) {
      source.on("error", () => socket.end());
      source.pipe(socket);
    },
    close() {
      socket.destroy();
    },
  };
}
