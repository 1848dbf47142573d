/**
 * A ValidatingAdmissionPolicy refuses objects and never changes one, but two of its fields write text the API server
 * passes on: `auditAnnotations[].valueExpression` (the value lands in the audit log, under the policy's key) and
 * `validations[].messageExpression` (the message of the refusal, returned to the client and logged). Both are CEL
 * over the request (k8s.io/apiserver pkg/admission/plugin/policy/validating: `object`, `oldObject`, `params`,
 * `namespaceObject`, `request`, `authorizer`, `variables`; `request` is built by CreateAdmissionRequest without the
 * objects). An expression that reaches a Secret's `data` copies Secret values out of the API server's store:
 *
 * - `object` / `oldObject` are the Secret when the policy's `matchConstraints.resourceRules` match secrets (a rule
 *   whose `apiGroups` hold `""` or `*` and whose `resources` hold `secrets` or every resource, with or without its subresources; a binding only narrows
 *   it);
 * - `params` is the Secret when `paramKind` is the core `v1` `Secret`;
 * - `variables.<name>` is whatever its own expression reaches.
 *
 * A root reaches the data unless what follows it is a field that cannot hold it: `kind`, `apiVersion`, `type`,
 * `immutable`, or one of metadata's plain fields (`metadata.annotations` may hold kubectl's last-applied copy of the
 * whole Secret, so it is not one of them).
 *
 * Every other expression (`validations[].expression`, `matchConditions[].expression`) decides whether the request is
 * admitted, which its sender sees: one bit of whatever it reads. So the Secret data a requester does not already hold
 * (`params` of a Secret kind, `oldObject` of a matched Secret, or a variable that reads either) may be read by no
 * expression at all; `object`, the Secret the requester sends, only by those that decide.
 */
import { isUnknown } from "../../workload";
import { field, isObj, items, str } from "../lenient";

const SAFE_FIELDS = new Set(["kind", "apiVersion", "type", "immutable"]);
const SAFE_METADATA = new Set([
  "name",
  "namespace",
  "generateName",
  "uid",
  "labels",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "ownerReferences",
  "finalizers",
]);

/**
 * Where the CEL string or bytes literal whose opening quote is at `q` ends (past its closing quote), or undefined when
 * it does not close (not a literal: the expression does not compile). cel-spec doc/langdef.md, "String and Bytes
 * Values": `"..."` and `'...'` end at the line, `"""..."""` and `'''...'''` span lines and end at the first closing
 * triple; escapes (`\"`, `\\`) are read only without the raw prefix: a raw string has none, so `r"\"` is the string
 * `\` and its second quote closes it.
 */
function literalEnd(expr: string, q: number, raw: boolean): number | undefined {
  const quote = expr[q] ?? "";
  const triple = expr.startsWith(quote.repeat(3), q);
  const close = triple ? quote.repeat(3) : quote;
  for (let k = q + close.length; k < expr.length; ) {
    const ch = expr[k];
    if (!triple && (ch === "\n" || ch === "\r")) return undefined;
    if (!raw && ch === "\\") {
      if (!triple && /[\r\n]/.test(expr[k + 1] ?? "")) return undefined;
      k += 2;
      continue;
    }
    if (expr.startsWith(close, k)) return k + close.length;
    k += 1;
  }
  return undefined;
}

/** A CEL literal's prefix: `r`/`R` (raw), `b`/`B` (bytes), or both; either order is read, raw when an `r` is there. */
const LITERAL_PREFIX = /^(?:[rRbB]|[bB][rR]|[rR][bB])$/;

/**
 * The expression with its string and bytes literals and its `//` comments blanked (so a root inside one is not read
 * as one, and one outside is), lexed as CEL does (cel-spec doc/langdef.md lexis: STRING_LIT, BYTES_LIT, COMMENT): a
 * literal starts at a quote, or at a prefix word of `r`, `b` or both right before one; a word that is any other
 * identifier is code. A quote that opens no closed literal is read as code, which keeps what follows it visible.
 */
function withoutStrings(expr: string): string {
  const out = expr.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k += 1) out[k] = " ";
  };
  for (let i = 0; i < expr.length; ) {
    const c = expr[i] ?? "";
    if (c === "/" && expr[i + 1] === "/") {
      const nl = expr.slice(i).search(/[\r\n]/);
      const end = nl < 0 ? expr.length : i + nl;
      blank(i, end);
      i = end;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expr.slice(i))?.[0];
    let q = i;
    if (word !== undefined) {
      const next = expr[i + word.length];
      if (!LITERAL_PREFIX.test(word) || (next !== '"' && next !== "'")) {
        i += word.length;
        continue;
      }
      q = i + word.length;
    } else if (c !== '"' && c !== "'") {
      i += 1;
      continue;
    }
    const end = literalEnd(expr, q, /[rR]/.test(word ?? ""));
    if (end === undefined) {
      i = q + 1;
      continue;
    }
    blank(i, end);
    i = end;
  }
  return out.join("");
}

/** The member names that follow a position (`.a.b`, `.?a`, `["a"]` in the original text), up to two. */
function chain(original: string, from: number): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  let i = from;
  while (out.length < 2) {
    const rest = original.slice(i);
    const dot = /^\s*\.\??\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
    if (dot !== null) {
      out.push(dot[1]);
      i += dot[0].length;
      continue;
    }
    const idx = /^\s*\[\s*(?:"([^"]*)"|'([^']*)')\s*\]/.exec(rest);
    if (idx !== null) {
      out.push(idx[1] ?? idx[2]);
      i += idx[0].length;
      continue;
    }
    if (/^\s*\[/.test(rest)) out.push(undefined); // an index computed at run time: any field
    break;
  }
  return out;
}

/** True when what follows a root cannot hold a Secret's data. */
function safeChain(names: readonly (string | undefined)[]): boolean {
  const [a, b] = names;
  if (a === undefined) return false;
  if (SAFE_FIELDS.has(a)) return true;
  return a === "metadata" && b !== undefined && SAFE_METADATA.has(b);
}

/** The roots of `roots` an expression reads beyond their safe fields (each named once). */
export function reachedRoots(expr: string, roots: ReadonlySet<string>): string[] {
  const blank = withoutStrings(expr);
  const out = new Set<string>();
  const re = /(?<![.\w])(object|oldObject|params|variables)\b/g;
  for (let m = re.exec(blank); m !== null; m = re.exec(blank)) {
    const root = m[1] ?? "";
    const after = m.index + root.length;
    if (root === "variables") {
      const [name] = chain(expr, after);
      if (name === undefined) {
        for (const r of roots) if (r.startsWith("variables.")) out.add(r);
      } else if (roots.has(`variables.${name}`)) out.add(`variables.${name}`);
      continue;
    }
    if (roots.has(root) && !safeChain(chain(expr, after))) out.add(root);
  }
  return [...out];
}

/** True when a rule of `resourceRules` matches the core group's secrets. */
function matchesSecrets(rules: unknown): string | undefined {
  if (isUnknown(rules)) return "matchConstraints.resourceRules";
  for (const [i, r] of items(rules).entries()) {
    const groups = items(field(r, "apiGroups"));
    const resources = items(field(r, "resources"));
    const group = groups.some((g) => g === "" || g === "*" || typeof g !== "string");
    const secret = resources.some(
      (x) => x === "secrets" || x === "*" || x === "*/*" || typeof x !== "string",
    );
    if (group && secret) return `matchConstraints.resourceRules[${i}]`;
  }
  return undefined;
}

/** The roots given with the `variables.<name>` entries whose expressions read one of them (in order, as CEL does). */
function withVariables(spec: unknown, base: ReadonlyMap<string, string>): Map<string, string> {
  const roots = new Map(base);
  if (roots.size === 0) return roots;
  for (const [i, v] of items(field(spec, "variables")).entries()) {
    const name = str(field(v, "name"));
    const expr = str(field(v, "expression"));
    if (typeof name !== "string") continue;
    const hit =
      typeof expr === "string" ? reachedRoots(expr, new Set(roots.keys()))[0] : [...roots.keys()][0];
    if (hit !== undefined)
      roots.set(`variables.${name}`, `variables[${i}] (${name}) reads ${hit}: ${roots.get(hit) ?? ""}`);
  }
  return roots;
}

/** The first of `fields` (key, text) that reads a root beyond its safe fields, with the reason. */
function firstReader(
  fields: readonly [string, unknown][],
  roots: ReadonlyMap<string, string>,
): { key: string; text: string | undefined; root: string; why: string } | undefined {
  if (roots.size === 0) return undefined;
  const names = new Set(roots.keys());
  for (const [key, value] of fields) {
    if (value === undefined) continue;
    const text = str(value);
    if (typeof text !== "string") {
      const [root, why] = [...roots.entries()][0] ?? ["", ""];
      return { key, text: undefined, root, why };
    }
    const root = reachedRoots(text, names)[0];
    if (root !== undefined) return { key, text, root, why: roots.get(root) ?? "" };
  }
  return undefined;
}

const quoted = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);

/**
 * Why a ValidatingAdmissionPolicy copies Secret data into the audit log or a response, or answers questions about a
 * Secret the requester does not hold, or undefined.
 *
 * Every expression's outcome reaches the requester: a validation's or match condition's true or false admits or
 * refuses the request, so an expression that compares a stored Secret's data with what the request carries (`!params.data.token.startsWith(object.data.guess)`)
 * answers one bit of that data a request, and repeated requests read it all. So `params` of a Secret kind and
 * `oldObject` of a matched Secret (the stored one, which an update or delete does not need read access to) may be
 * read beyond their safe fields by no expression. `object` of a matched Secret is what the requester itself sends:
 * a validation may test it, but its value may not be copied into a message or the audit log.
 */
export function policyLeaksSecretData(props: unknown): string | undefined {
  const spec = field(props, "spec");
  if (!isObj(spec)) return undefined;
  const held = new Map<string, string>();
  const rule = matchesSecrets(field(field(spec, "matchConstraints"), "resourceRules"));
  if (rule !== undefined) {
    held.set(
      "oldObject",
      `oldObject is the stored Secret the request replaces or deletes (${rule} names secrets)`,
    );
  }
  const paramKind = field(spec, "paramKind");
  const pk = str(field(paramKind, "kind"));
  const pv = str(field(paramKind, "apiVersion"));
  if (isUnknown(paramKind) || isUnknown(pk) || isUnknown(pv) || (pk === "Secret" && pv === "v1"))
    held.set("params", "params is a Secret (paramKind v1 Secret)");
  const all = new Map(held);
  if (rule !== undefined)
    all.set("object", `object is the Secret the request writes (${rule} names secrets)`);
  const allRoots = withVariables(spec, all);
  const heldRoots = withVariables(spec, held);
  const decisions: [string, unknown][] = [
    ...items(field(spec, "matchConditions")).map((c, i): [string, unknown] => [
      `spec.matchConditions[${i}].expression`,
      field(c, "expression"),
    ]),
    ...items(field(spec, "validations")).map((v, i): [string, unknown] => [
      `spec.validations[${i}].expression`,
      field(v, "expression"),
    ]),
  ];
  const outputs: [string, unknown, string][] = [
    ...items(field(spec, "auditAnnotations")).map((a, i): [string, unknown, string] => [
      `spec.auditAnnotations[${i}].valueExpression`,
      field(a, "valueExpression"),
      "the API server writes its value into the audit log",
    ]),
    ...items(field(spec, "validations")).map((v, i): [string, unknown, string] => [
      `spec.validations[${i}].messageExpression`,
      field(v, "messageExpression"),
      "the API server returns its value as the refusal's message, to the client and into the audit log",
    ]),
  ];
  const oracle = firstReader(
    [...decisions, ...outputs.map(([k, v]): [string, unknown] => [k, v])],
    heldRoots,
  );
  if (oracle !== undefined)
    return `${oracle.key}${oracle.text === undefined ? " is not readable and may read" : ` ${quoted(oracle.text)} reads`} ${oracle.root} beyond its name, labels, kind and type, and ${oracle.why}: whether the request is admitted, or what it is told, answers questions about a Secret's data the requester need not be able to read, one request at a time (allowed: only kind, apiVersion, type and metadata's plain fields of params and oldObject; object, the Secret the request itself writes, in a validation's or match condition's expression)`;
  for (const [key, value, where] of outputs) {
    const leak = firstReader([[key, value]], allRoots);
    if (leak === undefined) continue;
    if (leak.text === undefined)
      return `${key} is not readable while ${leak.why}: ${where}, so it may copy Secret data there`;
    return `${key} ${quoted(leak.text)} reads ${leak.root} beyond its name, labels, kind and type, and ${leak.why}: ${where}, copying Secret data out (only kind, apiVersion, type and metadata's plain fields may be read there)`;
  }
  return undefined;
}
