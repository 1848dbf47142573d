/**
 * A Kubernetes container's probes and lifecycle handlers, as the kubelet runs them: which name a `host` (it connects
 * from the node), which `exec` a command inside the container, and the command lines and headers themselves.
 */
import type { HeaderView, HookCommandView } from "../../workload";
import { isUnknown, type Val } from "../../workload";
import { at, carriesSecret, field, items, join, list, str, type TaintCheck } from "../lenient";

/** Probes and lifecycle handlers, by where they are written in a container. */
const HANDLERS = [
  "livenessProbe",
  "readinessProbe",
  "startupProbe",
  "lifecycle.postStart",
  "lifecycle.preStop",
];

/**
 * Probes and lifecycle handlers that name a `host`: the kubelet connects from the node to that address. Pod
 * Security baseline (`hostProbesAndHostLifecycle`) refuses any non-empty host, so no trim: `" "` counts.
 */
export function hostProbes(c: unknown, cPath: string): { host: Val<string>; path: string }[] {
  const out: { host: Val<string>; path: string }[] = [];
  for (const name of HANDLERS) {
    for (const kind of ["httpGet", "tcpSocket"]) {
      const path = `${name}.${kind}`;
      const handler = at(c, path);
      const host = isUnknown(handler) ? handler : str(field(handler, "host"));
      if (host === undefined || host === "") continue;
      out.push({ host, path: join(cPath, `${path}.host`) });
    }
  }
  return out;
}

/** Probes and lifecycle handlers that run a command inside the container (`exec`), by where they were written. */
export function execHooks(c: unknown, cPath: string): string[] {
  return HANDLERS.filter((n) => field(at(c, n), "exec") !== undefined).map((n) => join(cPath, `${n}.exec`));
}

/**
 * What the kubelet runs in or sends to the container for its probes and lifecycle hooks (pkg/kubelet/prober
 * runProbe, lifecycle handlers): each `exec.command` runs inside the container, each `httpGet.httpHeaders` entry is
 * sent to the container's own server.
 */
export function hookParts(
  c: unknown,
  cPath: string,
  tainted: TaintCheck,
): { commands: HookCommandView[]; headers: HeaderView[] } {
  const commands: HookCommandView[] = [];
  const headers: HeaderView[] = [];
  for (const n of HANDLERS) {
    const h = at(c, n);
    const base = join(join(cPath, n), "exec.command");
    const cmd = list(field(field(h, "exec"), "command"));
    if (isUnknown(cmd))
      commands.push({ what: n, args: [{ value: cmd, tainted: tainted(base), path: base }] });
    else if (cmd !== undefined)
      commands.push({
        what: n,
        args: cmd.map((a, i) => {
          const value = str(a);
          const path = join(base, i);
          return { value, tainted: tainted(path) || carriesSecret(value), path };
        }),
      });
    items(field(field(h, "httpGet"), "httpHeaders")).forEach((hd, i) => {
      const path = join(join(join(cPath, n), "httpGet.httpHeaders"), i);
      const value = str(field(hd, "value"));
      headers.push({
        name: str(field(hd, "name")),
        value,
        tainted: tainted(path) || carriesSecret(value),
        path,
      });
    });
  }
  return { commands, headers };
}
