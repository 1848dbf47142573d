import { launchSpec, projectNetworkName, type ResolvedProject } from "../components/model";

/** The plan a person reads before anything is deployed: budget, and per template its walls. */
export function describePlan(stack: string, p: ResolvedProject): string {
  const lines = [
    `stack ${stack}: project ${p.spec.name} on ${p.spec.backend}${p.spec.enabled ? "" : " (DISABLED: nothing new may start)"}`,
    p.spec.budget.enforce === "metered"
      ? `  budget: cap $${p.budget.capUsd.toFixed(2)}, ${p.budget.concurrency} task(s) at once, ${p.budget.arithmetic}`
      : `  budget: ${p.budget.arithmetic} ≤ cap $${p.budget.capUsd.toFixed(2)} (a slot the size of template ${p.largestTemplate})`,
  ];
  for (const name of Object.keys(p.spec.templates).sort()) {
    const s = launchSpec(p, name, projectNetworkName(p.spec.name));
    lines.push(
      `  template ${name}: ${s.image}, user ${s.user}, drop ${s.capDrop.join(",")}, ${s.resources.vcpu} vCPU, ` +
        `${s.resources.memoryMb} MB, ${s.resources.pids} pids, /tmp ${s.tmpfs.sizeMb} MB, ${s.timeoutSeconds} s, ` +
        `egress ${s.egress.mode === "none" ? "none" : `proxy to ${s.egress.allow.join(", ")}`}, runtime ${s.runtime}` +
        (s.broker === undefined ? "" : `, broker ${s.broker.routes.join(", ")} (port ${s.broker.port})`),
    );
  }
  for (const [route, r] of Object.entries(p.spec.broker?.routes ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    lines.push(
      `  broker route ${route}: ${r.methods.join(",")} ${r.paths.join(" ")} to ${r.upstream}, credential from ` +
        `${r.credential.secret.includes(":") ? r.credential.secret : `sandbox:${r.credential.secret}`} in ` +
        `${r.credential.query === undefined ? `header ${r.credential.header ?? "Authorization"}` : `query ${r.credential.query}`}` +
        `${r.rateLimit === undefined ? "" : `, at most ${r.rateLimit.requests} per ${r.rateLimit.perSeconds} s`}` +
        `${r.maxResponseBytes === undefined ? "" : `, responses up to ${r.maxResponseBytes} bytes`}`,
    );
  }
  return lines.join("\n");
}
