/**
 * Where the ledger's alerts go besides its own record: a line on stderr, a JSON-lines file, an HTTP webhook. A sink
 * never blocks a launch: the webhook is sent in the background (three tries, backing off), and {@link AlertOutbox}
 * lets a process wait for what is still in flight before it exits.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { AlertSinks } from "../../components/model";
import type { AlertRecord, AlertSink } from "./records";

/** The webhook deliveries still in flight, so that a short-lived process can wait for them. */
export class AlertOutbox {
  private readonly inFlight = new Set<Promise<void>>();

  track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** Waits for every delivery in flight, at most `timeoutMs`. */
  async flush(timeoutMs = 10_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((r) => {
        timer = setTimeout(r, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
}

/** The JSON an alert is written and sent as. */
export function alertJson(a: AlertRecord): string {
  return JSON.stringify({
    id: a.id,
    at: new Date(a.at).toISOString(),
    month: a.month,
    kind: a.kind,
    project: a.project,
    agent: a.agent,
    runId: a.runId,
    message: a.message,
  });
}

/** POSTs one alert, up to `tries` times with a growing pause; a failure after the last is reported to `warn`. */
export async function postAlert(
  url: string,
  a: AlertRecord,
  warn: (line: string) => void,
  tries = 3,
  pauseMs = 250,
): Promise<void> {
  let last = "";
  for (let i = 0; i < tries; i++) {
    try {
      const r = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: alertJson(a),
        signal: AbortSignal.timeout(5_000),
      });
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (i < tries - 1) await new Promise((r) => setTimeout(r, pauseMs * 2 ** i));
  }
  warn(`alert ${a.kind} (id ${a.id}) could not be sent to the webhook after ${tries} tries: ${last}\n`);
}

/** The sinks the config names (stderr by default), sending webhooks through `outbox`. */
export function alertSinks(
  config: AlertSinks,
  outbox: AlertOutbox,
  stderr: (line: string) => void = (l) => process.stderr.write(l),
): AlertSink[] {
  const sinks: AlertSink[] = [];
  if (config.stderr) sinks.push((a) => stderr(`alert ${a.kind}: ${a.message}\n`));
  const file = config.file;
  if (file !== undefined) {
    sinks.push((a) => {
      try {
        mkdirSync(dirname(file), { recursive: true });
        appendFileSync(file, `${alertJson(a)}\n`);
      } catch (e) {
        stderr(
          `alert ${a.kind} could not be appended to ${file}: ${e instanceof Error ? e.message : String(e)}\n`,
        );
      }
    });
  }
  const webhook = config.webhook;
  if (webhook !== undefined) sinks.push((a) => outbox.track(postAlert(webhook, a, stderr)));
  return sinks;
}
