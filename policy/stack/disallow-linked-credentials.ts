/**
 * Credentials that reach a task through another object of the same input: a ConfigMap the pod reads (a key ref,
 * `envFrom.configMapRef`, a `configMap` volume or projected source) that holds a credential-shaped value or a Pulumi
 * secret, the cloud identity its ServiceAccount carries (EKS IRSA, GKE Workload Identity, an EKS Pod Identity
 * association), and the Secrets Tekton's creds-init mounts from a run's ServiceAccount. A pod alone cannot show
 * them; its own annotations are `sandbox-disallow-secret-env`'s. It needs every resource of one input set: a stack
 * in the pack, every document scanned together in scan.
 */
import { knownFormat, secretEnvReason, secretValueReason } from "../../components/model";
import { violation } from "../rules/helpers";
import { SERVICE_ACCOUNT_IDENTITIES, SERVICE_ACCOUNT_LABELS } from "../rules/secret-injectors";
import { parseKubeType } from "../sources/kubernetes/sites";
import { at, field, items, REDACTED_SECRET, str } from "../sources/lenient";
import { adaptResources } from "../sources/subject";
import { isUnknown, isUnreadable, type Val, type WorkloadView } from "../workload";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

/**
 * The EKS Pod Identity association of the AWS provider: a role for one ServiceAccount of a cluster; the same object of
 * the ACK EKS controller (`eks.services.k8s.aws`, `spec`) and Crossplane's AWS provider (`eks.aws.upbound.io`,
 * `spec.forProvider`), each with `serviceAccount` and `namespace`.
 */
const POD_IDENTITY_ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation";

interface Named {
  readonly name: string;
  readonly namespace: string | undefined;
  readonly r: StackResource;
}

function coreObjects(resources: readonly StackResource[], kind: string): Named[] {
  return resources.flatMap((r) => {
    const t = parseKubeType(r.type);
    if (t?.kind !== kind || t.group !== "core") return [];
    const name = str(at(r.props, "metadata.name"));
    const ns = str(at(r.props, "metadata.namespace"));
    return [
      {
        name: typeof name === "string" ? name : r.name,
        namespace: typeof ns === "string" ? ns : undefined,
        r,
      },
    ];
  });
}

/**
 * Every object that may be the one the pod names, in its namespace: a namespace left unwritten on either side may be
 * the other's, and of two with one name the set may deploy either (kubectl applies the last; another tool, another
 * order), so each is judged.
 */
function findAll(objects: readonly Named[], name: Val<string>, ns: Val<string>): Named[] {
  if (typeof name !== "string") return [];
  const podNs = typeof ns === "string" ? ns : undefined;
  return objects.filter(
    (o) => o.name === name && (o.namespace === undefined || podNs === undefined || o.namespace === podNs),
  );
}

/** Why one ConfigMap value is a credential, judged as `name` (a variable or a file name); undefined when not. */
function valueReason(name: string, v: unknown, asFile: boolean): string | undefined {
  if (isUnreadable(v) || v === REDACTED_SECRET)
    return "it is a Pulumi secret (or a value the policy cannot read)";
  if (typeof v !== "string") return undefined;
  if (asFile) return knownFormat(v) ?? (v.includes("\n") ? undefined : secretEnvReason(name, v));
  return secretEnvReason(name, v) ?? secretValueReason(v);
}

/** The ConfigMap's keys and values: `data`, and for a volume `binaryData` read as text. */
function entriesOf(cm: StackResource, withBinary: boolean): [string, unknown][] {
  const data = field(cm.props, "data");
  const out: [string, unknown][] = [];
  if (isUnreadable(data)) return [["(data)", data]];
  if (typeof data === "object" && data !== null) out.push(...Object.entries(data as Record<string, unknown>));
  const bin = field(cm.props, "binaryData");
  if (withBinary && typeof bin === "object" && bin !== null && !isUnknown(bin))
    for (const [k, v] of Object.entries(bin as Record<string, unknown>))
      out.push([k, typeof v === "string" ? Buffer.from(v, "base64").toString("utf8") : v]);
  return out;
}

function configMapFindings(w: WorkloadView, configMaps: readonly Named[], urn: string): StackFinding[] {
  const out: StackFinding[] = [];
  const ns = w.podNamespace;
  const add = (message: string, path: string) => out.push({ ...violation(message, path), urn });
  for (const c of w.containers) {
    const who = c.role === "container" ? `container "${c.name}"` : `${c.role} container "${c.name}"`;
    for (const e of c.env) {
      if (e.from !== "configMapKeyRef" && e.from !== "configMapRef") continue;
      const keyed = e.from === "configMapKeyRef";
      for (const cm of findAll(configMaps, e.ref, ns))
        for (const [k, v] of entriesOf(cm.r, false)) {
          if (keyed && k !== e.key && k !== "(data)") continue;
          const variable = keyed
            ? typeof e.name === "string"
              ? e.name
              : k
            : `${typeof e.key === "string" ? e.key : ""}${k}`;
          // A key ref is judged by the variable's name and by the key's own (`DB_PASSWORD` read into `P`).
          const why = valueReason(variable, v, false) ?? (keyed ? valueReason(k, v, false) : undefined);
          if (why !== undefined)
            add(
              `${who} gets variable ${variable} from ConfigMap "${cm.name}" key ${k} (${keyed ? "configMapKeyRef" : "envFrom.configMapRef"}): ${why} (the value is not shown)`,
              e.path,
            );
        }
    }
    const volumes = isUnknown(w.podVolumes) ? [] : (w.podVolumes ?? []);
    for (const m of c.mounts) {
      if (m.type !== "configMap" && m.type !== "projected") continue;
      const vol = volumes.find((v) => v.name === m.volume);
      for (const use of vol?.configMaps ?? []) {
        for (const cm of findAll(configMaps, use.name, ns))
          for (const [k, v] of entriesOf(cm.r, true)) {
            if (use.keys !== undefined && !use.keys.includes(k) && k !== "(data)") continue;
            const why = valueReason(k, v, true);
            if (why !== undefined)
              add(
                `${who} mounts ConfigMap "${cm.name}" (volume "${m.volume ?? "?"}"), whose key ${k} holds a credential: ${why} (the content is not shown)`,
                m.path,
              );
          }
      }
    }
  }
  return out;
}

function identityFindings(
  w: WorkloadView,
  accounts: readonly Named[],
  associations: readonly StackResource[],
  urn: string,
): StackFinding[] {
  const out: StackFinding[] = [];
  const sa = w.serviceAccountName;
  const path = `${w.podPath}.serviceAccountName`;
  for (const account of findAll(accounts, sa, w.podNamespace))
    for (const [where, table] of [
      ["annotation", SERVICE_ACCOUNT_IDENTITIES],
      ["label", SERVICE_ACCOUNT_LABELS],
    ] as const) {
      const map = account === undefined ? undefined : at(account.r.props, `metadata.${where}s`);
      for (const t of table) {
        const v =
          typeof map === "object" && map !== null ? (map as Record<string, unknown>)[t.key] : undefined;
        if (typeof v === "string" && t.on(v))
          out.push({
            ...violation(
              `the pod runs as ServiceAccount "${account?.name}", whose ${where} ${t.key}: "${v}" gives it a cloud identity: ${t.gives}, whatever automountServiceAccountToken says`,
              path,
            ),
            urn,
          });
      }
    }
  for (const a of associations) {
    const spec =
      a.type === POD_IDENTITY_ASSOCIATION
        ? a.props
        : (at(a.props, "spec.forProvider") ?? field(a.props, "spec"));
    const name = str(field(spec, "serviceAccount"));
    const ns = str(field(spec, "namespace"));
    const podNs = typeof w.podNamespace === "string" ? w.podNamespace : "default";
    if (name !== sa || (typeof ns === "string" && ns !== podNs)) continue;
    out.push({
      ...violation(
        `the pod runs as ServiceAccount "${String(sa)}", which EKS Pod Identity association "${a.name}" binds to an IAM role: the pod identity agent hands the pod that role's credentials, whatever automountServiceAccountToken says`,
        path,
      ),
      urn,
    });
  }
  return out;
}

/** Where a Tekton run names the ServiceAccount its pods run as (pkg/apis/pipeline/v1 TaskRun, PipelineRun). */
function tektonAccounts(kind: string, props: unknown, fallback: string): { name: string; path: string }[] {
  const named = (path: string, dflt?: string) => {
    const v = str(at(props, path));
    return typeof v === "string" && v !== ""
      ? [{ name: v, path }]
      : dflt === undefined
        ? []
        : [{ name: dflt, path }];
  };
  if (kind === "TaskRun") return named("spec.serviceAccountName", fallback);
  if (kind !== "PipelineRun") return [];
  const run = [...named("spec.taskRunTemplate.serviceAccountName"), ...named("spec.serviceAccountName")];
  return [
    ...(run.length > 0 ? run : named("spec.taskRunTemplate.serviceAccountName", fallback)),
    ...items(at(props, "spec.taskRunSpecs")).flatMap((_, i) => [
      ...named(`spec.taskRunSpecs[${i}].serviceAccountName`),
      ...named(`spec.taskRunSpecs[${i}].taskServiceAccountName`),
    ]),
  ];
}

/** Annotations that make Tekton's creds-init mount a Secret into every step (pkg/credentials gitcreds, dockercreds). */
const CREDS_INIT = /^tekton\.dev\/(?:git|docker)-/;

/**
 * Tekton's creds-init (pkg/pod/creds_init.go): each Secret listed in the run's ServiceAccount `secrets` and annotated
 * `tekton.dev/git-*` or `tekton.dev/docker-*` is mounted into every step. The account is the run's, else
 * config-defaults' `default-service-account`, else `default`. A listed Secret the input does not hold may be one.
 */
function tektonCredsFindings(
  resources: readonly StackResource[],
  accounts: readonly Named[],
  configMaps: readonly Named[],
): StackFinding[] {
  if (accounts.length === 0) return [];
  const secrets = coreObjects(resources, "Secret");
  const configured = configMaps
    .filter((c) => c.name === "config-defaults")
    .map((c) => str(at(c.r.props, "data.default-service-account")))
    .find((v): v is string => typeof v === "string" && v !== "");
  const out: StackFinding[] = [];
  for (const r of resources) {
    const t = parseKubeType(r.type);
    if (t?.group !== "tekton.dev") continue;
    const ns = str(at(r.props, "metadata.namespace"));
    for (const { name, path } of tektonAccounts(t.kind, r.props, configured ?? "default"))
      for (const account of findAll(accounts, name, ns))
        for (const entry of items(field(account.r.props, "secrets"))) {
          const secret = str(field(entry, "name"));
          if (typeof secret !== "string" || secret === "") continue;
          const held = findAll(secrets, secret, account.namespace ?? ns);
          const annotated = held.flatMap((s) => {
            const a = at(s.r.props, "metadata.annotations");
            return typeof a === "object" && a !== null
              ? Object.keys(a).filter((k) => CREDS_INIT.test(k))
              : [];
          });
          const why =
            held.length === 0
              ? `lists Secret "${secret}", which the input does not hold: Tekton mounts it into every step if it is annotated tekton.dev/git-* or tekton.dev/docker-*`
              : annotated.length > 0
                ? `lists Secret "${secret}", annotated ${annotated.join(", ")}: Tekton mounts it into every step (creds-init)`
                : undefined;
          if (why !== undefined)
            out.push({
              ...violation(`the ${t.kind} runs as ServiceAccount "${account.name}", which ${why}`, path),
              urn: r.urn,
            });
        }
  }
  return out;
}

/** The check, over any set of resources (the stack rule and the scan run it). */
export function checkLinkedCredentials(resources: readonly StackResource[]): StackFinding[] {
  const configMaps = coreObjects(resources, "ConfigMap");
  const accounts = coreObjects(resources, "ServiceAccount");
  const associations = resources.filter(
    (r) =>
      r.type === POD_IDENTITY_ASSOCIATION ||
      (parseKubeType(r.type)?.kind === "PodIdentityAssociation" &&
        /^eks\.(?:services\.k8s|aws\.upbound\.io)/.test(parseKubeType(r.type)?.group ?? "")),
  );
  if (configMaps.length === 0 && accounts.length === 0 && associations.length === 0) return [];
  const out: StackFinding[] = [];
  for (const r of resources) {
    if (!r.type.startsWith("kubernetes:") && parseKubeType(r.type) === undefined) continue;
    for (const w of adaptResources(r.type, r.props, r.name)) {
      if (w.subject !== "workload" || w.origin.backend !== "kubernetes") continue;
      out.push(
        ...configMapFindings(w, configMaps, r.urn),
        ...identityFindings(w, accounts, associations, r.urn),
      );
    }
  }
  out.push(...tektonCredsFindings(resources, accounts, configMaps));
  return out;
}

export const disallowLinkedCredentials = defineStackRule({
  id: "sandbox-disallow-linked-credentials",
  description:
    "No credential reaches a task through another object of the input: a ConfigMap holding a credential or a Pulumi secret that the pod reads, or a cloud identity on its ServiceAccount.",
  mission: true,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: { cis: ["4.10"], kyverno: ["disallow-secrets-from-env-vars"] },
  defaults: {},
  remediationSteps:
    "Keep credentials out of ConfigMaps the task reads, and give the task's ServiceAccount no cloud identity; a broker or proxy adds the credential outside the sandbox.",
  check(resources) {
    return checkLinkedCredentials(resources);
  },
});
