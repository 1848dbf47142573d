/**
 * A tiny CrossGuard runner, built the way @pulumi/policy's server builds policy arguments (server.js
 * makeAnalyzeRpcFun / makeAnalyzeStackRpcFun / makeRemediateRpcFun): props go through a protobuf Struct, the SDK's
 * own deserializeProperties (secrets unwrapped for validation, kept as `Secret` for remediation) and its
 * unknownCheckingProxy. Unknowns and secrets are written the way the engine sends them.
 */
import {
  type PolicyResource,
  type ResourceValidationArgs,
  type ResourceValidationPolicy,
  type StackValidationArgs,
  type StackValidationPolicy,
  UnknownValueError,
  unknownCheckingProxy,
} from "@pulumi/policy";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import type { Preset } from "../../policy/presets";
import { forgetRecordedSecrets, packArgs } from "../../policy/pulumi/pack";
import type { RuleSelection } from "../../policy/rules/registry";

// @pulumi/policy's deserializer is internal; the harness uses it so args match what the engine's RPC produces.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { deserializeProperties } = require("@pulumi/policy/deserialize") as {
  deserializeProperties: (s: Struct, proxySecrets: boolean) => Record<string, unknown>;
};

/** The engine's unknown value on the wire (plugin.UnknownStringValue). */
export const UNKNOWN_WIRE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A Pulumi secret as the engine sends it. */
export function secret(value: unknown): Record<string, unknown> {
  return { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value };
}

function toStruct(props: object): Struct {
  // Struct has no `undefined`; the engine drops such properties too.
  return Struct.fromJavaScript(JSON.parse(JSON.stringify(props)));
}

export interface Outcome {
  /** `policy-id: message` for each violation. */
  readonly violations: readonly { policy: string; message: string }[];
  /** Advisory "could not be checked" notes, by policy. */
  readonly notes: readonly { policy: string; message: string }[];
  readonly notApplicable: readonly string[];
}

export interface RunOptions {
  readonly config?: Record<string, object>;
  readonly selection?: RuleSelection;
  /** The preset the pack is built with (`packArgs({ preset })`). */
  readonly preset?: Preset;
  readonly name?: string;
  readonly additionalSecretOutputs?: string[];
}

const NOT_APPLICABLE = Symbol("notApplicable");

/**
 * The pack config these tests run with unless one names the rule: the job root the fixtures' job folders live under
 * (`/var/lib/sandbox-projects/<project>/jobs/<id>`), declared as an operator declares it. With none declared, a
 * writable host mount fails (sandbox-require-single-job-mount); its own tests pass `{ jobRoots: [] }` to see that.
 */
export const JOB_ROOT = "/var/lib/sandbox-projects";
export const DECLARED: Readonly<Record<string, object>> = {
  "sandbox-require-single-job-mount": { jobRoots: [JOB_ROOT] },
};

function resourceArgs(
  type: string,
  props: Struct,
  opts: RunOptions,
  policy: string,
  proxySecrets: boolean,
): ResourceValidationArgs {
  const p = unknownCheckingProxy(deserializeProperties(props, proxySecrets));
  const name = opts.name ?? "fixture";
  return {
    type,
    props: p,
    urn: `urn:pulumi:test::sandbox::${type}::${name}`,
    name,
    opts: {
      protect: false,
      ignoreChanges: [],
      aliases: [],
      customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
      additionalSecretOutputs: opts.additionalSecretOutputs ?? [],
    },
    stackTags: new Map(),
    isType: () => false,
    asType: () => undefined,
    getConfig: <T extends object>() => (opts.config?.[policy] ?? DECLARED[policy] ?? {}) as T,
    notApplicable: (): never => {
      throw NOT_APPLICABLE;
    },
  };
}

function resourcePolicies(selection?: RuleSelection, preset?: Preset): ResourceValidationPolicy[] {
  return packArgs({ ...selection, ...(preset === undefined ? {} : { preset }) }).policies.filter(
    (p): p is ResourceValidationPolicy => "validateResource" in p,
  );
}

/** Validates one resource with every resource policy, like `pulumi preview` (no remediation). */
/** Validation alone, as the engine runs it when no remediation ran before it in this run. */
export function validate(type: string, props: object, opts: RunOptions = {}): Outcome {
  forgetRecordedSecrets();
  return validateAfter(type, props, opts);
}

function validateAfter(type: string, props: object, opts: RunOptions): Outcome {
  const violations: { policy: string; message: string }[] = [];
  const notes: { policy: string; message: string }[] = [];
  const notApplicable: string[] = [];
  // One request's Struct, as the engine sends it; each policy deserializes it anew (server.js makeAnalyzeRpcFun).
  const struct = toStruct(props);
  for (const policy of resourcePolicies(opts.selection, opts.preset)) {
    const fns = Array.isArray(policy.validateResource) ? policy.validateResource : [policy.validateResource];
    for (const fn of fns) {
      if (fn === undefined) continue;
      const args = resourceArgs(type, struct, opts, policy.name, false);
      try {
        void fn(args, (message) => violations.push({ policy: policy.name, message }));
      } catch (e) {
        if (e === NOT_APPLICABLE) notApplicable.push(policy.name);
        else if (e instanceof UnknownValueError)
          notes.push({ policy: policy.name, message: (e as Error).message });
        else throw e;
      }
    }
  }
  return { violations, notes, notApplicable };
}

/**
 * Remediates then validates, like the engine at enforcement level `remediate`: remediations get props with
 * `Secret` wrappers, their results are serialized (secrets kept) and validation runs on the result.
 */
export function remediateThenValidate(
  type: string,
  props: object,
  opts: RunOptions = {},
): { props: object; outcome: Outcome } {
  forgetRecordedSecrets();
  let current: object = props;
  for (const policy of resourcePolicies(opts.selection)) {
    if (policy.remediateResource === undefined) continue;
    const args = resourceArgs(type, toStruct(current), opts, policy.name, true);
    const result = policy.remediateResource(args) as Record<string, unknown> | undefined;
    if (result !== undefined) current = serialize(result);
  }
  return { props: current, outcome: validateAfter(type, current, opts) };
}

/**
 * What the engine does for one resource: the remediations of the policies at level `remediate` (@pulumi/policy
 * server.js Remediate), then every validation on the result, in one pack process.
 */
export function engineRun(
  type: string,
  props: object,
  opts: RunOptions = {},
): { props: object; outcome: Outcome } {
  const remediating = packArgs(opts.selection)
    .policies.filter((p) => p.enforcementLevel === "remediate")
    .map((p) => p.name);
  const { props: remediated } = remediateThenValidate(type, props, {
    ...opts,
    selection: { ...opts.selection, only: remediating },
  });
  return { props: remediated, outcome: validateAfter(type, remediated, opts) };
}

/** The SDK's serializeProperties, synchronously for plain values: `Secret` back to the engine's secret shape. */
function serialize(v: unknown): object {
  const walk = (x: unknown): unknown => {
    if (x !== null && typeof x === "object" && x.constructor?.name === "Secret")
      return secret(walk((x as { value: unknown }).value));
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === "object")
      return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y)]));
    return x;
  };
  return walk(v) as object;
}

/** The sorted, distinct ids of the policies a resource violates. */
export function violated(o: Outcome): string[] {
  return [...new Set(o.violations.map((v) => v.policy))].sort();
}

export function noted(o: Outcome): string[] {
  return [...new Set(o.notes.map((v) => v.policy))].sort();
}

export interface StackFixture {
  readonly type: string;
  readonly name: string;
  readonly props: object;
  readonly additionalSecretOutputs?: string[];
  /** Property name -> names of fixtures it was computed from. */
  readonly dependsOn?: Record<string, string[]>;
}

/** Validates a stack with every stack policy, like the engine after a preview. */
export function validateStack(
  fixtures: readonly StackFixture[],
  config: Record<string, object> = {},
): Outcome {
  const resources: PolicyResource[] = fixtures.map((f) => ({
    type: f.type,
    name: f.name,
    urn: `urn:pulumi:test::sandbox::${f.type}::${f.name}`,
    props: unknownCheckingProxy(deserializeProperties(toStruct(f.props), false)),
    opts: {
      protect: false,
      ignoreChanges: [],
      aliases: [],
      customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
      additionalSecretOutputs: f.additionalSecretOutputs ?? [],
    },
    dependencies: [],
    propertyDependencies: {},
    isType: () => false,
    asType: () => undefined,
  }));
  fixtures.forEach((f, i) => {
    const r = resources[i];
    if (r === undefined) return;
    for (const [k, names] of Object.entries(f.dependsOn ?? {})) {
      r.propertyDependencies[k] = names
        .map((n) => resources.find((x) => x.name === n))
        .filter((x): x is PolicyResource => x !== undefined);
    }
  });
  const violations: { policy: string; message: string }[] = [];
  const notes: { policy: string; message: string }[] = [];
  const notApplicable: string[] = [];
  for (const policy of packArgs().policies.filter((p): p is StackValidationPolicy => "validateStack" in p)) {
    const args: StackValidationArgs = {
      resources,
      stackTags: new Map(),
      getConfig: <T extends object>() => (config[policy.name] ?? {}) as T,
      notApplicable: (): never => {
        throw NOT_APPLICABLE;
      },
    };
    try {
      void policy.validateStack(args, (message) => violations.push({ policy: policy.name, message }));
    } catch (e) {
      if (e === NOT_APPLICABLE) notApplicable.push(policy.name);
      else if (e instanceof UnknownValueError)
        notes.push({ policy: policy.name, message: (e as Error).message });
      else throw e;
    }
  }
  return { violations, notes, notApplicable };
}
