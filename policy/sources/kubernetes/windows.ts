/**
 * Pods that run on Windows nodes, and the identity a Windows node gives their containers. The Windows kubelet
 * ignores `runAsUser`, `runAsGroup` and the groups (kubernetes `pkg/kubelet/kuberuntime/security_context_windows.go`,
 * `verifyRunAsNonRoot`: "Windows container does not support SecurityContext.RunAsUser"); a container runs as
 * `securityContext.windowsOptions.runAsUserName` (the container's, else the pod's), else as the image's user, which is
 * `ContainerAdministrator` in the Server Core and Windows images. `runAsNonRoot: true` refuses only the exact string
 * `ContainerAdministrator`, while Windows compares account names without case and has other administrators.
 */
import { isUnknown, type Val } from "../../workload";
import { at, entries, field, items, join, str } from "../lenient";

/** The node labels the kubelet sets for the operating system (k8s.io/api/core/v1 `LabelOSStable`, and its beta). */
const OS_LABELS = ["kubernetes.io/os", "beta.kubernetes.io/os"];

/** Why the pod runs on Windows nodes, and where that is written; undefined for a Linux pod. */
export interface WindowsPin {
  readonly reason: string;
  readonly path: string;
}

/**
 * Whether a pod spec (at `specPath`) runs on Windows nodes: `os.name: windows` (the API's `OSName`, exact), a
 * `nodeSelector` on the OS label, or a required node affinity with a term that selects Windows nodes (the terms are
 * ORed, so one such term lets the scheduler place it there).
 */
export function windowsPin(spec: unknown, specPath: string): WindowsPin | undefined {
  const os = str(at(spec, "os.name"));
  if (os === "windows") return { reason: "spec.os.name is windows", path: join(specPath, "os.name") };
  const selector = field(spec, "nodeSelector");
  for (const [k, v] of entries(selector))
    if (OS_LABELS.includes(k) && v === "windows")
      return { reason: `nodeSelector ${k}: windows`, path: join(specPath, `nodeSelector.${k}`) };
  const termsPath = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
  const terms = items(at(spec, termsPath));
  for (let t = 0; t < terms.length; t++) {
    const exprs = items(field(terms[t], "matchExpressions"));
    for (let e = 0; e < exprs.length; e++) {
      const key = str(field(exprs[e], "key"));
      if (typeof key !== "string" || !OS_LABELS.includes(key)) continue;
      const op = str(field(exprs[e], "operator"));
      const values = items(field(exprs[e], "values"));
      const selects =
        (op === "In" && values.includes("windows")) || (op === "NotIn" && values.includes("linux"));
      if (selects)
        return {
          reason: `its required node affinity selects ${key} ${op} [${values.map(String).join(", ")}]`,
          path: join(specPath, `${termsPath}[${t}].matchExpressions[${e}]`),
        };
    }
  }
  return undefined;
}

/** Windows accounts with the administrators' rights (compared without case, as Windows compares account names). */
const ADMINISTRATORS = new Set([
  "containeradministrator",
  "administrator",
  ".\\administrator",
  "builtin\\administrators",
  "nt authority\\system",
  "system",
  "localsystem",
  ".\\localsystem",
]);

/** The one account Windows container images ship without administrators' rights. */
const NON_ADMIN = new Set(["containeruser"]);

/**
 * Why a Windows container's user is not the non-administrator `ContainerUser`, or undefined when it is. `userName` is
 * the effective `windowsOptions.runAsUserName`.
 */
export function windowsUserProblem(userName: Val<string>): string | undefined {
  if (isUnknown(userName)) return undefined;
  if (userName === undefined)
    return "sets no windowsOptions.runAsUserName, so it runs as the image's user (ContainerAdministrator in the Server Core and Windows images); runAsUser and runAsGroup are ignored on Windows";
  const name = userName.toLowerCase();
  if (ADMINISTRATORS.has(name))
    return `runs as ${userName}, an administrator of the Windows container (windowsOptions.runAsUserName)`;
  if (!NON_ADMIN.has(name))
    return `runs as ${userName} (windowsOptions.runAsUserName), whose rights the policy cannot see; use ContainerUser`;
  return undefined;
}
