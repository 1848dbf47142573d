import { proxySpec } from "../components/spec/egress";
import { launchSpec } from "../components/spec/launch";
import type { ResolvedProject } from "../components/spec/project";
import { dockerClient } from "../runtime/docker/client";
import { Launcher, LaunchRefused } from "../runtime/launcher";
import { offSwitch } from "../runtime/offSwitch";
import { policyPreflight } from "../runtime/preflight";
import { ensureProxy } from "../runtime/proxy";
import { ESCAPE_CHECKS, runEscape, runProbe } from "../runtime/walls";

/** The task verbs: they drive the local Docker engine directly, from the stack's validated templates. */
export const TASK_VERBS = ["run", "probe", "escape", "off"] as const;
export type TaskVerb = (typeof TASK_VERBS)[number];

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

function templatesOf(project: ResolvedProject, names: readonly string[]): string[] {
  const all = Object.keys(project.spec.templates).sort();
  const unknown = names.filter((n) => !all.includes(n));
  if (unknown.length > 0) {
    throw new LaunchRefused(unknown[0] ?? "", [
      `no template "${unknown.join(", ")}" in this stack; it has: ${all.join(", ")}`,
    ]);
  }
  return names.length > 0 ? [...names] : all;
}

/**
 * Runs a task verb. `run <template> [-- command...]` launches one task; `probe [templates]` proves every wall;
 * `escape [templates]` tries the four escapes; `off` removes everything labelled with the project.
 * Returns the exit code: 0 when every wall held (or the task exited 0), 1 otherwise.
 */
export async function runTaskVerb(
  verb: TaskVerb,
  project: ResolvedProject,
  rest: readonly string[],
  io: Io,
  json: boolean,
): Promise<number> {
  const docker = dockerClient();
  await docker.ping();
  const name = project.spec.name;
  const networkName = `${name}-net`;
  const proxy = proxySpec(project, networkName);
  const launcher = new Launcher(docker, {
    preflight: policyPreflight({}, (w) => io.err(`warning: ${w}\n`)),
    // Proxy-mode tasks need the project's proxy: start it (or keep the one `up` started) on first use.
    ...(proxy === undefined ? {} : { proxy: () => ensureProxy(docker, proxy) }),
    onEvent: (e) => io.err(`[${e.type}] task ${e.id} (${e.running} running)\n`),
  });
  const stop = async (signal: NodeJS.Signals) => {
    io.err(`\n${signal}: stopping; removing running tasks...\n`);
    const removed = await launcher.shutdown();
    io.err(`removed ${removed.length} task container(s): ${removed.join(", ") || "none"}\n`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  const onInt = () => void stop("SIGINT");
  const onTerm = () => void stop("SIGTERM");
  process.once("SIGINT", onInt);
  process.once("SIGTERM", onTerm);
  try {
    switch (verb) {
      case "off": {
        const report = await offSwitch(docker, name);
        io.out(
          json
            ? `${JSON.stringify(report)}\n`
            : `off switch for ${name}: removed ${report.containers.length} container(s), ${report.networks.length} network(s), ${report.volumes.length} volume(s)\n` +
                [...report.containers, ...report.networks, ...report.volumes]
                  .map((n) => `  - ${n}\n`)
                  .join(""),
        );
        return 0;
      }
      case "run": {
        const dash = rest.indexOf("--");
        const names = dash === -1 ? rest : rest.slice(0, dash);
        const command = dash === -1 ? undefined : rest.slice(dash + 1);
        if (names.length !== 1)
          throw new LaunchRefused("", [
            "run takes exactly one template: run <stack> <template> [-- command...]",
          ]);
        const [template] = templatesOf(project, names);
        const spec = launchSpec(project, template ?? "", networkName);
        const result = await launcher.run(spec, command && command.length > 0 ? { command } : {});
        if (json) io.out(`${JSON.stringify(result)}\n`);
        else {
          io.out(result.stdout);
          io.err(result.stderr);
          io.err(
            `task ${result.id}: exit ${result.exitCode}${result.limits.length ? `, limits hit: ${result.limits.join(", ")}` : ""}; job folder ${result.jobDir}\n`,
          );
        }
        return result.exitCode === 0 ? 0 : 1;
      }
      case "probe": {
        let ok = true;
        const reports: Record<string, unknown> = {};
        for (const template of templatesOf(project, rest)) {
          io.err(`probing template ${template}...\n`);
          const t = project.spec.templates[template];
          if (t === undefined) continue;
          const { report } = await runProbe(launcher, launchSpec(project, template, networkName), t);
          reports[template] = report;
          ok &&= report.passed;
          if (!json) {
            io.out(`template ${template}: ${report.passed ? "every wall held" : "A WALL FAILED"}\n`);
            for (const w of report.walls) {
              const mark = w.ok === true ? "ok  " : w.ok === false ? "FAIL" : "n/a ";
              io.out(`  ${mark} ${w.wall.padEnd(13)} declared ${w.declared}; observed ${w.observed}\n`);
            }
          }
        }
        if (json) io.out(`${JSON.stringify(reports)}\n`);
        return ok ? 0 : 1;
      }
      case "escape": {
        let ok = true;
        const results: Record<string, unknown[]> = {};
        for (const template of templatesOf(project, rest)) {
          const spec = launchSpec(project, template, networkName);
          results[template] = [];
          for (const check of ESCAPE_CHECKS) {
            io.err(`escape ${check} from template ${template}...\n`);
            const r = await runEscape(launcher, docker, spec, check);
            results[template]?.push(r);
            ok &&= r.blocked && r.leftovers.length === 0;
            if (!json) {
              io.out(
                `${r.blocked ? "blocked" : "ESCAPED"} ${check} (${template}): by ${r.blockedBy}; ${r.evidence}; left running: ${r.leftovers.length}\n`,
              );
            }
          }
        }
        if (json) io.out(`${JSON.stringify(results)}\n`);
        return ok ? 0 : 1;
      }
    }
  } catch (e) {
    if (e instanceof LaunchRefused) {
      io.err(`${e.message}\n`);
      return 2;
    }
    throw e;
  } finally {
    process.removeListener("SIGINT", onInt);
    process.removeListener("SIGTERM", onTerm);
  }
}
