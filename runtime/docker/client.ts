import Dockerode from "dockerode";
import { TASK_OUTPUT_MAX_BYTES } from "../../components/model/task-output";

/**
 * A client for the local Docker engine: `DOCKER_HOST` when it names a unix socket, else the default socket.
 * TCP engines are refused on purpose: the toolkit only ever drives the engine of the machine it runs on.
 */
export function dockerClient(env: NodeJS.ProcessEnv = process.env): Dockerode {
  const host = env.DOCKER_HOST;
  if (host !== undefined && host !== "") {
    if (!host.startsWith("unix://")) {
      throw new Error(`DOCKER_HOST "${host}" is not a unix socket; the toolkit drives the local engine only`);
    }
    return new Dockerode({ socketPath: host.slice("unix://".length) });
  }
  return new Dockerode({ socketPath: "/var/run/docker.sock" });
}

/** What `read` gives, or nothing when the object it reads is gone from the engine. */
export function noneIfGone<T>(read: Promise<T[]>): Promise<T[]> {
  return read.catch((e: unknown) => {
    if (isNotFound(e)) return [];
    throw e;
  });
}

/**
 * Splits Docker's multiplexed log stream (8-byte frame headers) into stdout and stderr, each at most `max` bytes:
 * the last ones, as the engine's own log rotation keeps them (a frame cut short at the end is read as far as it goes).
 */
export function demuxLogs(buffer: Buffer, max = TASK_OUTPUT_MAX_BYTES): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const size = { out: 0, err: 0 };
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const stream = buffer[offset];
    const length = buffer.readUInt32BE(offset + 4);
    const frame = buffer.subarray(offset + 8, offset + 8 + length);
    if (stream === 2) {
      err.push(frame);
      size.err += frame.length;
      while (size.err - (err[0]?.length ?? 0) >= max) size.err -= (err.shift() as Buffer).length;
    } else {
      out.push(frame);
      size.out += frame.length;
      while (size.out - (out[0]?.length ?? 0) >= max) size.out -= (out.shift() as Buffer).length;
    }
    offset += 8 + length;
  }
  const last = (chunks: Buffer[]) => {
    const all = Buffer.concat(chunks);
    return (all.length > max ? all.subarray(all.length - max) : all).toString("utf8");
  };
  return { stdout: last(out), stderr: last(err) };
}

/** True for the engine's "no such container/network/volume" answer. */
export function isNotFound(e: unknown): boolean {
  return (e as { statusCode?: number }).statusCode === 404;
}
