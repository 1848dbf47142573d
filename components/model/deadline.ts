/**
 * What runs as PID 1 of a task's container. The kernel ignores SIGKILL sent to a namespace's PID 1 from inside it,
 * so the deadline's `timeout` (which signals from a child) can end the task only if the task is not PID 1 itself.
 * - `engine-init`: the engine starts an init as PID 1 (Docker's `init: true`), which runs the command as its child;
 * - `command`: the command is PID 1 (Kubernetes has no such init).
 */
export type Pid1 = "engine-init" | "command";

/**
 * The in-container deadline around a task's command: `timeout -s KILL <seconds> command...`. When the command would
 * be PID 1 (`pid1: "command"`), a shell stays PID 1 and runs `timeout` as its child instead:
 * `sh -c 'timeout -s KILL <seconds> "$@" & wait $!' sh command...`.
 */
export function deadline(seconds: number, command: readonly string[], pid1: Pid1): string[] {
  const timeout = ["timeout", "-s", "KILL", String(seconds)];
  if (pid1 === "engine-init") return [...timeout, ...command];
  return ["sh", "-c", `${timeout.join(" ")} "$@" & wait $!`, "sh", ...command];
}
