import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import {
  judgeProbe,
  type LaunchSpec,
  launchSpec,
  PROBE_TIMEOUT_SECONDS,
  type ProbeReport,
  parseProbeOutput,
  parseUser,
  probeEgressUrl,
  probeJobVolumeName,
  probeScript,
  projectLabels,
  type ResolvedProject,
} from "../model";
import { dockerLabels, hardenedContainerArgs } from "./containerArgs";

export interface TaskTemplateArgs {
  /** The checked project the template belongs to. */
  readonly project: ResolvedProject;
  /** The template's name in `project.spec.templates`. */
  readonly template: string;
  /** The name of the project's internal network (known at preview: the project names it). */
  readonly networkName: string;
  /** Run the template's self-check probe at `up`. Defaults to `true`. */
  readonly probe?: boolean;
  /**
   * Proxy mode or broker routes: the probe's own network, which the project's proxy and broker have joined.
   * Required to probe such a template.
   */
  readonly probeNetwork?: string;
}

/**
 * A task template on Docker. Docker has no template object, so the template is its validated launch spec (an
 * output the runtime reads) plus, when asked, one probe run: a container of exactly this template that runs the
 * self-check, waits for it to end, and reports every wall as declared and as observed.
 */
export class TaskTemplate extends pulumi.ComponentResource {
  /** Everything the runtime needs to launch one task of this template. */
  public readonly spec: pulumi.Output<LaunchSpec>;
  /** The probe's raw output (empty when no probe ran). */
  public readonly probeLogs: pulumi.Output<string>;
  /** The probe's walls, declared vs observed (undefined when no probe ran). */
  public readonly probeReport: pulumi.Output<ProbeReport | undefined>;

  constructor(name: string, args: TaskTemplateArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sandbox:docker:TaskTemplate", name, {}, opts);
    const spec = launchSpec(args.project, args.template, args.networkName);
    const template = args.project.spec.templates[args.template];
    this.spec = pulumi.output(spec);

    const runProbe =
      (args.probe ?? true) &&
      args.project.spec.enabled &&
      template !== undefined &&
      (spec.network === "none" || args.probeNetwork !== undefined);
    if (runProbe && template !== undefined) {
      const labels = projectLabels(spec.project, "probe", spec.template, spec.specHash);
      // A tmpfs-backed volume owned by the task user stands in for the job folder: the probe needs one writable
      // folder, and no host folder has to exist for it.
      const { uid, gid } = parseUser(spec.user);
      const jobVolume = new docker.Volume(
        `${name}-probe-job`,
        {
          // Named, so the probe's mount is a known value at preview (where the policy pack judges it).
          name: probeJobVolumeName(spec.project, spec.template),
          driver: "local",
          driverOpts: {
            type: "tmpfs",
            device: "tmpfs",
            o: `size=${spec.tmpfs.sizeMb}m,uid=${uid},gid=${gid},mode=0700`,
          },
          labels: dockerLabels(projectLabels(spec.project, "job-volume", spec.template, spec.specHash)),
        },
        { parent: this, deleteBeforeReplace: true },
      );
      const script = probeScript({
        jobFolder: spec.jobFolder.containerPath,
        egressUrl: probeEgressUrl(spec.egress),
        ...(spec.broker?.probe === undefined ? {} : { broker: spec.broker.probe }),
      });
      const probeSpec: LaunchSpec = {
        ...spec,
        timeoutSeconds: Math.min(spec.timeoutSeconds, PROBE_TIMEOUT_SECONDS),
      };
      const container = new docker.Container(
        `${name}-probe`,
        {
          ...hardenedContainerArgs(
            probeSpec,
            { type: "volume", source: jobVolume.name },
            {
              command: ["sh", "-c", script],
              labels,
              ...(args.probeNetwork ? { network: args.probeNetwork } : {}),
            },
          ),
          attach: true,
          logs: true,
          mustRun: false,
          rm: false,
          start: true,
        },
        { parent: this, deleteBeforeReplace: true },
      );
      this.probeLogs = container.containerLogs.apply((l) => l ?? "");
      this.probeReport = this.probeLogs.apply((l) =>
        judgeProbe(template, parseProbeOutput(l), { pidsLimitApplied: false }),
      );
    } else {
      this.probeLogs = pulumi.output("");
      this.probeReport = pulumi.output(undefined);
    }

    this.registerOutputs({ spec: this.spec, probeLogs: this.probeLogs, probeReport: this.probeReport });
  }
}
