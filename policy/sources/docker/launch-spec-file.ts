/**
 * The runtime's launch spec (`kind: sandbox.launch/v1`, components/model/launch.ts) -> the Engine API create body
 * the launcher would send for a task of the template, judged as the launcher's preflight judges it.
 */
import type { LaunchSpec } from "../../../components/model";
import { taskContainer } from "../../../runtime/docker/taskContainer";
import { idPart } from "../../exemptions";
import type { Lines } from "../text/lines";
import { type FileOutput, isObj, text } from "../text/output";
import { LAUNCH_TYPE } from "./read";

/** The `kind` of the runtime's launch spec format. */
const LAUNCH_SPEC_KIND: LaunchSpec["kind"] = "sandbox.launch/v1";

/** A document of the runtime's launch spec format. */
export function isLaunchSpec(value: Record<string, unknown>): boolean {
  return value.kind === LAUNCH_SPEC_KIND;
}

/**
 * One launch spec at key path `base`, named `<project>/<template>`; findings point at the spec's first line. A spec
 * that cannot be turned into a body is an error, unless `alsoBody`: the document is judged as an Engine API body too.
 */
export function readLaunchSpec(
  out: FileOutput,
  value: Record<string, unknown>,
  lines: Lines,
  base: readonly (string | number)[],
  alsoBody: boolean,
): void {
  const at = lines.line(base);
  const spec = value as unknown as LaunchSpec;
  const project = text(value.project) ?? "project";
  const template = text(value.template) ?? "template";
  const name = `${project}/${template}`;
  let body: unknown;
  // The folder the spec's job folders live under, which the launcher declares as the job root (runtime/preflight.ts).
  let declared: string | undefined;
  try {
    // Exactly what the launcher sends, and its preflight judges, for a task of this template (named "task").
    declared = isObj(value.jobFolder) ? text(value.jobFolder.hostRoot) : undefined;
    body = taskContainer(spec, "task", { hostRoot: declared ?? "/" }).body;
  } catch (e) {
    if (alsoBody) return;
    out.error(at, `launch spec ${name} cannot be read: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  out.add({
    format: "launch-spec",
    type: LAUNCH_TYPE,
    props: body,
    kind: "launch",
    name,
    id: `${out.file}:launch/${idPart(project)}/${idPart(template)}`,
    locate: () => out.loc(at),
    ...(declared === undefined ? {} : { jobRoots: [declared] }),
  });
}
