/**
 * The policy gate: the first container of every task and probe pod. A cluster programs a new pod's NetworkPolicy a
 * moment after the pod starts, and until then the pod's packets may go anywhere; the gate waits, running no task
 * code, until the pod's default deny holds, so that the task's first packet already meets its policy.
 *
 * It knows the policy holds when the cluster's API server (its Service address, which kubelet gives every pod as
 * `KUBERNETES_SERVICE_HOST`, service links or not) stops answering the pod: no policy of the project lets a task
 * reach it, and it answers any pod no policy stops yet. While it answers, the gate waits; if it still answers after
 * {@link POLICY_GATE_SECONDS}, the pod fails without starting the task (a cluster that enforces no NetworkPolicy
 * runs no task). An image without `nc` or `bash` cannot knock: the gate says so on its log and lets the task start.
 */
import type * as k8s from "@pulumi/kubernetes";

/** The gate container's name. */
export const POLICY_GATE = "policy-gate";

/** The longest the gate waits for the policy to hold (well inside the Job's grace past the task's deadline). */
export const POLICY_GATE_SECONDS = 20;

/** The line the gate writes when the policy never held; the launcher reports it. */
export const POLICY_GATE_FAILED = "sandbox: the pod's network policy did not hold";

/**
 * The gate's script (POSIX sh). `knock` succeeds when a TCP connection to the API server opens within a second:
 * busybox or netcat's `nc`, else bash's `/dev/tcp`.
 */
export function policyGateScript(seconds = POLICY_GATE_SECONDS): string {
  return [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions
    'h="${KUBERNETES_SERVICE_HOST:-}"; p="${KUBERNETES_SERVICE_PORT:-443}"',
    '[ -n "$h" ] || exit 0',
    "if command -v nc >/dev/null 2>&1; then",
    '  knock() { nc -w 1 "$h" "$p" </dev/null >/dev/null 2>&1; }',
    "elif command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then",
    '  knock() { timeout 1 bash -c \'exec 3<>"/dev/tcp/$0/$1"\' "$h" "$p" 2>/dev/null; }',
    "else",
    '  echo "sandbox: the policy gate cannot check this pod (no nc, or bash and timeout, in the image)" >&2',
    "  exit 0",
    "fi",
    "i=0",
    `while [ "$i" -lt ${seconds} ]; do`,
    "  knock || exit 0",
    "  i=$((i+1)); sleep 1",
    "done",
    `echo "${POLICY_GATE_FAILED} within ${seconds} s: the cluster's API server still answered the pod; the task did not start" >&2`,
    "exit 1",
  ].join("\n");
}

/**
 * The gate as an init container of a pod whose task container is `task` (same image, walls and limits). With
 * `stderrFile` (a file in the volume `streams`, mounted at its folder), it first makes that file empty, so that the
 * task container can mount it alone (components/kubernetes/pod.ts).
 */
export function policyGateContainer(
  task: k8s.types.input.core.v1.Container,
  stderrFile?: { readonly volume: string; readonly folder: string; readonly file: string },
): k8s.types.input.core.v1.Container {
  const make = stderrFile === undefined ? "" : `: > ${stderrFile.folder}/${stderrFile.file}\n`;
  return {
    name: POLICY_GATE,
    image: task.image,
    command: ["sh", "-c", `${make}${policyGateScript()}`],
    securityContext: task.securityContext,
    resources: task.resources,
    ...(stderrFile === undefined
      ? {}
      : { volumeMounts: [{ name: stderrFile.volume, mountPath: stderrFile.folder }] }),
  };
}
