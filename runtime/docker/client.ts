import Dockerode from "dockerode";

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

/** Splits Docker's multiplexed log stream (8-byte frame headers) into stdout and stderr. */
export function demuxLogs(buffer: Buffer): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const stream = buffer[offset];
    const size = buffer.readUInt32BE(offset + 4);
    const frame = buffer.subarray(offset + 8, offset + 8 + size);
    if (stream === 2) err.push(frame);
    else out.push(frame);
    offset += 8 + size;
  }
  return { stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
}

/** True for the engine's "no such container/network/volume" answer. */
export function isNotFound(e: unknown): boolean {
  return (e as { statusCode?: number }).statusCode === 404;
}
