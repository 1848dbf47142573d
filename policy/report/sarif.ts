/**
 * The report as SARIF 2.1.0, in the shape GitHub code scanning accepts: one run, the rules with their description,
 * help, crosswalk ids as tags and a `security-severity`; each result with a physical location (file, and line when
 * the input has lines) and, for Pulumi inputs, the URN as a logical location; exempted findings as suppressions
 * with their reason; unreadable inputs as tool notifications.
 */
import { createHash } from "node:crypto";
import type { Severity } from "../rules/types";
import { REPOSITORY_URL, rulesHelpUri } from "./links";
import type { Location, ReportFinding, RuleInfo, ScanReport } from "./model";

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

/** GitHub's `security-severity`: critical ≥ 9.0, high 7.0–8.9, medium 4.0–6.9, low 0.1–3.9. */
export const SECURITY_SEVERITY: Readonly<Record<Severity, string>> = {
  critical: "9.5",
  high: "8.0",
  medium: "5.5",
  low: "3.0",
};

type SarifLevel = "error" | "warning" | "note" | "none";

function levelOf(l: RuleInfo["enforcementLevel"]): SarifLevel {
  if (l === "mandatory" || l === "remediate") return "error";
  if (l === "advisory") return "warning";
  return "none";
}

/** A relative path as a URI reference (`k8s/my app.yaml` -> `k8s/my%20app.yaml`). */
export function uriOf(file: string): string {
  return file
    .replace(/\\/g, "/")
    .split("/")
    .map((s) => encodeURIComponent(s))
    .join("/");
}

function physical(l: Location): Record<string, unknown> {
  return {
    artifactLocation: { uri: uriOf(l.file) },
    ...(l.line === undefined
      ? {}
      : { region: { startLine: l.line, ...(l.column === undefined ? {} : { startColumn: l.column }) } }),
  };
}

function help(r: RuleInfo): { text: string; markdown: string } {
  const tags = r.tags.filter((t) => t !== "mission");
  const text = [
    r.description,
    "",
    `Fix: ${r.remediationSteps}`,
    "",
    `Enforcement: ${r.enforcementLevel}${r.mission ? " (one of the four mission walls)" : ""}. Severity: ${r.severity}.`,
    ...(tags.length === 0 ? [] : [`Crosswalk: ${tags.join(", ")}.`]),
  ].join("\n");
  const markdown = [
    `**${r.description}**`,
    "",
    `**Fix:** ${r.remediationSteps}`,
    "",
    `Enforcement: \`${r.enforcementLevel}\`${r.mission ? " (mission wall)" : ""} · severity: \`${r.severity}\``,
    ...(tags.length === 0 ? [] : ["", `Crosswalk: ${tags.map((t) => `\`${t}\``).join(", ")}`]),
  ].join("\n");
  return { text, markdown };
}

function fingerprint(f: ReportFinding): string {
  return createHash("sha256")
    .update(`${f.ruleId}\0${f.resource.id}\0${f.message}`)
    .digest("hex")
    .slice(0, 32);
}

export interface SarifOptions {
  /** `runAutomationDetails.id`, GitHub's upload category (default `sandbox-projects-scan/`). */
  readonly category?: string;
}

export function toSarif(report: ScanReport, options: SarifOptions = {}): Record<string, unknown> {
  const index = new Map(report.rules.map((r, i) => [r.id, i]));
  const rules = report.rules.map((r) => ({
    id: r.id,
    name: r.id
      .split("-")
      .map((w) => (w === "" ? w : w[0]?.toUpperCase() + w.slice(1)))
      .join(""),
    shortDescription: { text: r.description },
    fullDescription: { text: `${r.description} ${r.remediationSteps}` },
    helpUri: rulesHelpUri(report.tool.version),
    help: help(r),
    defaultConfiguration: { level: levelOf(r.enforcementLevel), enabled: r.enforcementLevel !== "disabled" },
    properties: {
      tags: ["security", ...r.tags],
      "security-severity": SECURITY_SEVERITY[r.severity],
      precision: "high",
      "problem.severity": r.enforcementLevel === "advisory" ? "warning" : "error",
      enforcementLevel: r.enforcementLevel,
      scope: r.scope,
    },
  }));
  const results = report.findings.map((f) => {
    const logical = f.location.urn ?? f.resource.id;
    return {
      ruleId: f.ruleId,
      ruleIndex: index.get(f.ruleId) ?? 0,
      kind: f.unchecked ? "review" : "fail",
      level: f.unchecked ? "note" : levelOf(f.level),
      message: {
        text: `${f.resource.kind}/${f.resource.name}: ${f.message}${f.unchecked ? " (could not be checked)" : ""}`,
      },
      locations: [
        {
          physicalLocation: physical(f.location),
          logicalLocations: [{ name: f.resource.name, fullyQualifiedName: logical, kind: "resource" }],
        },
      ],
      partialFingerprints: { "sandboxFinding/v1": fingerprint(f) },
      ...(f.exemption === undefined
        ? {}
        : { suppressions: [{ kind: "external", status: "accepted", justification: f.exemption.reason }] }),
      properties: {
        enforcementLevel: f.level,
        severity: f.severity,
        resource: f.resource.id,
        resourceType: f.resource.type,
        ...(f.path === undefined ? {} : { path: f.path }),
        ...(f.location.urn === undefined ? {} : { urn: f.location.urn }),
        ...(f.live === true ? { live: true } : {}),
      },
    };
  });
  const notifications = [
    ...report.errors.map((e) => ({
      level: "error",
      message: { text: e.message },
      locations: [{ physicalLocation: physical(e.location) }],
    })),
    ...report.assumptions.map((a) => ({
      level: "note",
      message: { text: `assumed: ${a.statement}` },
      locations: [{ physicalLocation: physical({ file: a.file }) }],
    })),
    ...report.skipped.map((s) => ({
      level: "note",
      message: { text: `skipped ${s.kind}${s.name === undefined ? "" : `/${s.name}`}: ${s.reason}` },
      locations: [{ physicalLocation: physical(s.location) }],
    })),
  ];
  return {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: report.tool.name,
            version: report.tool.version,
            semanticVersion: report.tool.version,
            informationUri: REPOSITORY_URL,
            rules,
          },
        },
        automationDetails: { id: options.category ?? "sandbox-projects-scan/" },
        invocations: [
          {
            executionSuccessful: report.errors.length === 0,
            exitCode: report.exitCode,
            toolExecutionNotifications: notifications,
          },
        ],
        results,
        properties: { pack: report.tool.pack, summary: report.summary },
      },
    ],
  };
}

export function formatSarif(report: ScanReport, options: SarifOptions = {}): string {
  return `${JSON.stringify(toSarif(report, options), null, 2)}\n`;
}
