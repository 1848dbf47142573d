/**
 * A DNS server for tests that answers A queries for a fixed set of names and NXDOMAIN for everything else, on one
 * address of this machine. The secrets broker resolves upstreams through DNS only (never a hosts file), so a test
 * that gives it a name needs one; it never forwards a query anywhere.
 */
import { createSocket, type Socket } from "node:dgram";

/** The A answers, by lower-case name. */
export type Zone = Readonly<Record<string, string>>;

/** Reads the question's name, or undefined when the message is not one plain question. */
function questionName(msg: Buffer): { name: string; end: number } | undefined {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  for (let guard = 0; guard < 128; guard++) {
    const len = msg[at];
    if (len === undefined || len > 63) return undefined;
    at += 1;
    if (len === 0) return { name: labels.join(".").toLowerCase(), end: at };
    labels.push(msg.subarray(at, at + len).toString("latin1"));
    at += len;
  }
  return undefined;
}

/** The answer to one query: the address of a known name for an A question, else NXDOMAIN (or no data). */
export function answer(msg: Buffer, zone: Zone): Buffer | undefined {
  const q = questionName(msg);
  if (q === undefined || msg.length < q.end + 4) return undefined;
  const qtype = msg.readUInt16BE(q.end);
  const question = msg.subarray(12, q.end + 4);
  const ip = zone[q.name];
  const header = Buffer.alloc(12);
  msg.copy(header, 0, 0, 2);
  const known = ip !== undefined;
  const withAnswer = known && qtype === 1;
  // QR, RD copied, RA; RCODE 3 (NXDOMAIN) for unknown names.
  header.writeUInt16BE(0x8000 | (msg.readUInt16BE(2) & 0x0100) | 0x0080 | (known ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(withAnswer ? 1 : 0, 6);
  if (!withAnswer) return Buffer.concat([header, question]);
  const rr = Buffer.alloc(16);
  rr.writeUInt16BE(0xc00c, 0);
  rr.writeUInt16BE(1, 2);
  rr.writeUInt16BE(1, 4);
  rr.writeUInt32BE(5, 6);
  rr.writeUInt16BE(4, 10);
  (ip as string).split(".").forEach((o, i) => {
    rr[12 + i] = Number(o);
  });
  return Buffer.concat([header, question, rr]);
}

/** Serves `zone` on UDP `host:port` until closed. */
export async function startDns(host: string, zone: Zone, port = 53): Promise<{ close(): Promise<void> }> {
  const socket: Socket = createSocket("udp4");
  socket.on("message", (msg, from) => {
    const reply = answer(msg, zone);
    if (reply !== undefined) socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => resolve());
  });
  return { close: () => new Promise<void>((r) => socket.close(() => r())) };
}
