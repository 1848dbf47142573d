/**
 * What a scan found, as plain data: the text, JSON and SARIF formatters read only this. Pure; no file system.
 */
import type { EnforcementLevel, Severity } from "../rules/types";

/** Where a finding points: a file and line for inputs that have lines, the Pulumi URN otherwise. */
export interface Location {
  /** The input as the user named it (relative to where the scan ran), `<stdin>` or a `--stdin-name`. */
  readonly file: string;
  /** 1-based; absent when the input has no lines worth pointing at (a Pulumi JSON document). */
  readonly line?: number;
  readonly column?: number;
  /** The Pulumi URN, for resources read from `pulumi preview --json` or `pulumi stack export`. */
  readonly urn?: string;
}

/** Which reader produced a resource. */
export type InputFormat =
  | "kubernetes"
  | "compose"
  | "pulumi-preview"
  | "pulumi-state"
  | "launch-spec"
  | "engine-create-body";

/** One resource that was judged. */
export interface ResourceRef {
  /** Stable id for exemptions: the URN, or `<file>:<Kind>/<name>` (`<file>:service/<name>` for Compose). */
  readonly id: string;
  readonly kind: string;
  readonly name: string;
  /** The Pulumi type token the rules saw (`kubernetes:apps/v1:Deployment`, `docker:index/container:Container`). */
  readonly type: string;
  readonly format: InputFormat;
  readonly location: Location;
}

/** The rule facts a report prints (the same ones the CrossGuard pack registers). */
export interface RuleInfo {
  readonly id: string;
  readonly description: string;
  readonly remediationSteps: string;
  readonly severity: Severity;
  readonly mission: boolean;
  /** `cis-docker:5.4`, `psa:...`, `kyverno:...`, `mission`. */
  readonly tags: readonly string[];
  /** The level this scan ran it at (pack config applied). */
  readonly enforcementLevel: EnforcementLevel;
  /** Resource rules judge one resource; stack rules judge a whole Pulumi stack. */
  readonly scope: "resource" | "stack";
}

export interface Exemption {
  readonly rule: string;
  /** The resource id or URN it matches; `*` matches any run of characters. */
  readonly resource: string;
  readonly reason: string;
}

export interface ReportFinding {
  readonly ruleId: string;
  readonly level: EnforcementLevel;
  readonly severity: Severity;
  /** The message as the pack reports it: `message [path]`. */
  readonly message: string;
  /** Where in the resource (`spec.template.spec.containers[0].securityContext`). */
  readonly path?: string;
  readonly resource: ResourceRef;
  readonly location: Location;
  /** "Could not be checked" (a preview unknown), not a violation. */
  readonly unchecked: boolean;
  /** Set when an exemption with its reason covers the finding. */
  readonly exemption?: { readonly reason: string; readonly resource: string };
  /**
   * Found in the object as the API server returned it (a stack export's `outputs`: defaults and admission
   * mutations), not in what the program asked for; the pack, which sees inputs only, cannot report it.
   */
  readonly live?: boolean;
}

export interface Skipped {
  readonly location: Location;
  readonly kind: string;
  readonly name?: string;
  readonly reason: string;
}

/** A value the scan had to assume (a Compose variable taken from `.env` or unset), so the reader can check it. */
export interface Assumption {
  readonly file: string;
  readonly statement: string;
}

export interface InputError {
  readonly location: Location;
  readonly message: string;
}

export interface ScanSummary {
  readonly resources: number;
  /** Violations of mandatory (or remediate) rules, not exempted: any one fails the scan. */
  readonly mandatory: number;
  readonly advisory: number;
  readonly exempted: number;
  readonly unchecked: number;
  readonly skipped: number;
  readonly errors: number;
}

export interface ScanReport {
  readonly tool: { readonly name: string; readonly version: string; readonly pack: string };
  readonly inputs: readonly string[];
  readonly rules: readonly RuleInfo[];
  readonly resources: readonly ResourceRef[];
  readonly findings: readonly ReportFinding[];
  readonly skipped: readonly Skipped[];
  readonly errors: readonly InputError[];
  /** What the scan assumed to read its inputs (Compose interpolation); the verdict holds under these. */
  readonly assumptions: readonly Assumption[];
  readonly exemptions: readonly Exemption[];
  readonly summary: ScanSummary;
  /** 0 no mandatory finding, 1 at least one, 2 bad input. */
  readonly exitCode: 0 | 1 | 2;
}

/** True when a finding blocks: a violation of a mandatory or remediate rule that no exemption covers. */
export function blocks(f: ReportFinding): boolean {
  return !f.unchecked && f.exemption === undefined && (f.level === "mandatory" || f.level === "remediate");
}

/** `file:line`, `file`, or the URN, for one-line messages. */
export function showLocation(l: Location): string {
  if (l.urn !== undefined) return `${l.file}: ${l.urn}`;
  return l.line === undefined ? l.file : `${l.file}:${l.line}`;
}
