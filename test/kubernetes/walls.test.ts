import { describe, expect, it } from "vitest";
import { hardenedContainerArgs } from "../../components/docker/containerArgs";
import {
  HOLDER,
  HOLDER_RESOURCES,
  hardenedPodSpec,
  STDERR_FILE,
  STREAMS_PATH,
  taskJob,
} from "../../components/kubernetes/pod";
import { POLICY_GATE, policyGateScript } from "../../components/kubernetes/policy-gate";
import { launchSpec, resolveProject } from "../../components/model";
import { ALL_RULES, judge } from "../../policy/rules/registry";
import { withJobRoots } from "../../policy/rules/require-single-job-mount";
import { adaptResource } from "../../policy/sources/subject";

const project = resolveProject({
  name: "parity",
  budget: { monthlyCapUsd: 100 },
  templates: {
    default: { image: "runner:1" },
    six: {
      image: "runner:1",
      capDrop: "seed-six",
      runtime: "runsc",
      user: "2000:3000",
      resources: { vcpu: 0.5, memoryMb: 256, pids: 64, tmpfsMb: 32 },
    },
  },
});

type Docker = ReturnType<typeof hardenedContainerArgs>;
type Pod = ReturnType<typeof hardenedPodSpec>;
// biome-ignore lint/suspicious/noExplicitAny: the table reads plain nested values of both shapes
const c0 = (p: Pod) => (p.containers as any[]).find((c) => c.name === "task");

/** Each wall, read from the Docker container arguments and from the Kubernetes pod spec of the same template. */
const WALLS: [string, (d: Docker) => unknown, (p: Pod) => unknown][] = [
  [
    "capability drop set",
    (d) => (d.capabilities as { drops: string[] }).drops,
    (p) => c0(p).securityContext.capabilities.drop,
  ],
  [
    "no added capabilities",
    (d) => (d.capabilities as { adds: string[] }).adds,
    (p) => c0(p).securityContext.capabilities.add ?? [],
  ],
  [
    "no privilege escalation",
    (d) => (d.securityOpts as string[]).includes("no-new-privileges:true"),
    (p) => c0(p).securityContext.allowPrivilegeEscalation === false,
  ],
  [
    "seccomp runtime default",
    (d) => !(d.securityOpts as string[]).some((o) => o.startsWith("seccomp")),
    (p) => c0(p).securityContext.seccompProfile.type === "RuntimeDefault",
  ],
  ["not privileged", (d) => d.privileged, (p) => c0(p).securityContext.privileged],
  ["read-only root", (d) => d.readOnly, (p) => c0(p).securityContext.readOnlyRootFilesystem],
  ["user", (d) => d.user, (p) => `${c0(p).securityContext.runAsUser}:${c0(p).securityContext.runAsGroup}`],
  ["memory limit (MiB)", (d) => d.memory, (p) => Number(c0(p).resources.limits.memory.replace("Mi", ""))],
  [
    "no swap / requests = limits",
    (d) => d.memorySwap === d.memory,
    (p) => c0(p).resources.requests.memory === c0(p).resources.limits.memory,
  ],
  [
    "cpu limit (vCPU)",
    (d) => Number(d.cpus),
    (p) => Number(c0(p).resources.limits.cpu.replace("m", "")) / 1000,
  ],
  [
    "/tmp size (MiB)",
    (d) => Number(/size=(\d+)m/.exec((d.tmpfs as Record<string, string>)["/tmp"] ?? "")?.[1]),
    (p) =>
      Number(
        (p.volumes as { emptyDir?: { sizeLimit?: string } }[])[0]?.emptyDir?.sizeLimit?.replace("Mi", ""),
      ),
  ],
  [
    "one writable job folder",
    (d) => (d.mounts as { target: string }[]).map((m) => m.target),
    (p) =>
      // The task's stderr is one file of the pod's own (a stream, as Docker's is a pipe): a test below holds it to that.
      (c0(p).volumeMounts as { mountPath: string; subPath?: string }[])
        .filter((m) => m.mountPath !== "/tmp" && !(m.mountPath === STDERR_FILE && m.subPath === "stderr"))
        .map((m) => m.mountPath),
  ],
  ["never restarted", (d) => d.restart === "no", (p) => p.restartPolicy === "Never"],
  ["no ports", (d) => (d.ports as unknown[]).length, (p) => (c0(p).ports ?? []).length],
  [
    "no host namespaces",
    (d) => d.ipcMode === "private" && d.networkMode !== "host",
    (p) => !p.hostNetwork && !p.hostPID && !p.hostIPC,
  ],
  [
    "deadline",
    (d) => (d.command as string[]).slice(0, 4).join(" "),
    (p) =>
      /timeout -s KILL (\d+)/.exec(c0(p).command[2])?.[0] &&
      `timeout -s KILL ${/KILL (\d+)/.exec(c0(p).command[2])?.[1]}`,
  ],
  [
    "stronger runtime",
    (d) => d.runtime ?? "runc",
    (p) => (p.runtimeClassName === "gvisor" ? "runsc" : (p.runtimeClassName ?? "runc")),
  ],
  ["no environment secrets (template env only)", (d) => (d.envs as string[]).length, (p) => c0(p).env.length],
];

describe("one spec, two backends, the same walls", () => {
  for (const template of ["default", "six"]) {
    const spec = launchSpec(project, template, "none");
    const docker = hardenedContainerArgs(spec, { type: "bind", source: "/jobs/x" });
    const pod = hardenedPodSpec(spec, "parity-task");
    it.each(WALLS.map(([wall, d, k]) => [wall, d, k] as const))(
      `${template}: %s`,
      (_wall, fromDocker, fromPod) => {
        expect(fromPod(pod)).toEqual(fromDocker(docker));
      },
    );
  }

  it("the policy gate comes first in every pod, with the task's image, walls and limits, and runs no task code", () => {
    for (const template of ["default", "six"]) {
      const spec = launchSpec(project, template, "none");
      const pod = hardenedPodSpec(spec, "parity-task");
      const task = c0(pod);
      const [gate, ...more] = pod.initContainers as unknown as Record<string, unknown>[];
      expect(more).toEqual([]);
      expect(gate).toEqual({
        name: POLICY_GATE,
        image: task.image,
        // It first makes the task's stderr file, the one thing of its volume the task container mounts.
        command: ["sh", "-c", `: > ${STREAMS_PATH}/stderr\n${policyGateScript()}`],
        securityContext: task.securityContext,
        resources: task.resources,
        volumeMounts: [{ name: "streams", mountPath: STREAMS_PATH }],
      });
      expect(JSON.stringify(gate)).not.toContain(JSON.stringify(spec.command));
    }
  });

  it("the holder is hardened like the task, mounts read-only, runs no task code, and the task writes only its stderr file", () => {
    // A Kata pod holds none (no node here runs Kata): its streams stay in its log.
    const kata = hardenedPodSpec({ ...launchSpec(project, "six", "none"), runtime: "kata" }, "parity-task");
    expect((kata.containers as unknown[]).length).toBe(1);
    expect(JSON.stringify(kata)).not.toContain(STREAMS_PATH);
    // runc and gVisor (the six template runs under runsc) pods hold one.
    for (const template of ["default", "six"]) {
      const spec = launchSpec(project, template, "none");
      const pod = hardenedPodSpec(spec, "parity-task");
      // The holder first: the node starts it before the task, which cannot then use up its processes.
      // biome-ignore lint/suspicious/noExplicitAny: the pod spec's containers, read field by field
      const [holder, task, ...more] = pod.containers as unknown as Record<string, any>[];
      expect(more).toEqual([]);
      expect(holder?.name).toBe(HOLDER);
      expect(holder?.image).toBe(task?.image);
      expect(holder?.securityContext).toEqual(task?.securityContext);
      expect(holder?.ports).toBeUndefined();
      expect(holder?.env).toBeUndefined();
      expect(JSON.stringify(holder?.command)).not.toContain(JSON.stringify(spec.command).slice(1, -1));
      expect(holder?.command?.[2]).toMatch(/^trap 'exit 0' TERM; sleep \d+ & wait \$!$/);
      expect(holder?.volumeMounts.every((m: { readOnly?: boolean }) => m.readOnly === true)).toBe(true);
      expect(holder?.resources.limits).toEqual({
        cpu: `${HOLDER_RESOURCES.vcpu * 1000}m`,
        memory: `${HOLDER_RESOURCES.memoryMb}Mi`,
        "ephemeral-storage": `${HOLDER_RESOURCES.diskMb}Mi`,
      });
      const streams = task?.volumeMounts.filter((m: { name: string }) => m.name === "streams");
      expect(streams).toEqual([{ name: "streams", mountPath: STDERR_FILE, subPath: "stderr" }]);
      expect(task?.command[2]).toMatch(
        new RegExp(`^exec 2>${STDERR_FILE}; timeout -s KILL \\d+ "\\$@" & wait \\$!$`),
      );
      // Without a holder (the stack's probe Job) the task's stderr stays in its log, and nothing else changes.
      const bare = hardenedPodSpec(spec, "parity-task", undefined, false);
      expect((bare.containers as unknown[]).length).toBe(1);
      expect(JSON.stringify(bare)).not.toContain(STREAMS_PATH);
    }
  });

  it("the pids limit is the launcher's on Docker (PidsLimit) and the node's on Kubernetes (podPidsLimit)", () => {
    const spec = launchSpec(project, "six", "none");
    expect(spec.resources.pids).toBe(64);
  });
});

describe("the toolkit's own output passes its own policy pack", () => {
  const mandatoryFindings = (type: string, props: unknown, jobRoot?: string) => {
    const subject = adaptResource(type, props, "x");
    if (subject === undefined) throw new Error(`no adapter for ${type}`);
    // The toolkit declares its job root, as the launcher's preflight does (runtime/preflight.ts).
    const config = (jobRoot === undefined ? {} : withJobRoots({}, [jobRoot])) as Record<string, object>;
    return judge(subject, ALL_RULES, config)
      .filter(({ rule }) => rule.enforcementLevel !== "advisory" && rule.enforcementLevel !== "disabled")
      .flatMap(({ rule, findings }) =>
        findings.filter((f) => !f.unchecked).map((f) => `${rule.id}: ${f.message}`),
      );
  };

  it.each(["default", "six"])("the %s task Job and PodTemplate", (template) => {
    const spec = launchSpec(project, template, "none");
    const job = taskJob(spec, "parity", "t1", "parity-task");
    expect(mandatoryFindings("kubernetes:batch/v1:Job", job)).toEqual([]);
    expect(
      mandatoryFindings("kubernetes:core/v1:PodTemplate", {
        metadata: { name: "t" },
        template: { spec: hardenedPodSpec(spec, "parity-task") },
      }),
    ).toEqual([]);
  });

  it.each(["default", "six"])("the %s Docker task container", (template) => {
    const spec = launchSpec(project, template, "none");
    const source = `${spec.jobFolder.hostRoot}/t1`;
    const args = hardenedContainerArgs(spec, { type: "bind", source });
    expect(mandatoryFindings("docker:index/container:Container", args, spec.jobFolder.hostRoot)).toEqual([]);
    // With no job root declared the same bind is not known to be a job folder.
    expect(mandatoryFindings("docker:index/container:Container", args)).toEqual([
      expect.stringMatching(/^sandbox-require-single-job-mount: .*no job root is declared/),
    ]);
  });
});
