/**
 * The ServiceAccount's own `automountServiceAccountToken`, read with the pods of the same input. Kubernetes'
 * ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount, `shouldAutomount`) mounts the token when the
 * pod's field is true, not when it is false, and when the pod leaves it unset, as the pod's ServiceAccount says (its
 * own unset field mounts). So a pod with no field of its own gets no token when its account, in the input, says
 * false.
 *
 * Only what cannot be another object is read: the account of the pod's name (`serviceAccountName`, else
 * `serviceAccount`, else `default`) in the pod's namespace, a namespace left unwritten matching only another left
 * unwritten (both land in the namespace they are applied to); every such account of the input must say false (of
 * two with one name the set may deploy either). A cloud identity on the account (its annotations, which project a
 * token whatever the field says) is judged apart, with the set (policy/stack/disallow-linked-credentials.ts).
 */

import type { Subject } from "../../workload";
import { at, field, str } from "../lenient";
import type { ScanItem } from "../text/items";
import { parseKubeType } from "./sites";

/** A ServiceAccount of the input: its name, namespace ("" unwritten) and whether it says false. */
export interface AccountAutomount {
  readonly name: string;
  readonly namespace: string;
  readonly automountFalse: boolean;
}

/** The core ServiceAccounts among the items. */
export function serviceAccountsOf(items: readonly Pick<ScanItem, "type" | "props">[]): AccountAutomount[] {
  return items.flatMap((i) => {
    const t = parseKubeType(i.type);
    if (t?.kind !== "ServiceAccount" || t.group !== "core") return [];
    const name = str(at(i.props, "metadata.name"));
    const ns = str(at(i.props, "metadata.namespace"));
    if (typeof name !== "string") return [];
    return [
      {
        name,
        namespace: typeof ns === "string" ? ns : "",
        // The API server takes a boolean only: a string "false" is no value it stores.
        automountFalse: field(i.props, "automountServiceAccountToken") === false,
      },
    ];
  });
}

/**
 * The view with the account's false where the pod leaves the field unset and every account of its name and
 * namespace in the input says false; the view itself otherwise (the pod's own field outranks the account's).
 */
export function withAccountAutomount(view: Subject, accounts: readonly AccountAutomount[]): Subject {
  if (accounts.length === 0 || view.subject !== "workload" || view.origin.backend !== "kubernetes")
    return view;
  if (view.automountServiceAccountToken !== undefined) return view;
  const name = view.serviceAccountName;
  const ns = view.podNamespace === undefined ? "" : view.podNamespace;
  if (typeof name !== "string" || typeof ns !== "string") return view;
  const same = accounts.filter((a) => a.name === name && a.namespace === ns);
  if (same.length === 0 || !same.every((a) => a.automountFalse)) return view;
  return { ...view, automountServiceAccountToken: false };
}
