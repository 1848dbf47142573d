/**
 * Kubernetes resource quantities (`500m`, `1.5`, `512Mi`, `1G`, `129e6`) and Docker sizes, as plain numbers.
 * Returns undefined for a spelling that is not a quantity, so a typo is "not set", never a huge number.
 */

const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** Parses a Kubernetes quantity to its base unit (cores for CPU, bytes for memory). */
export function parseQuantity(raw: unknown): number | undefined {
  if (typeof raw === "number") return Number.isFinite(raw) && raw >= 0 ? raw : undefined;
  if (typeof raw !== "string") return undefined;
  const m = /^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(
    raw.trim(),
  );
  if (m === null) return undefined;
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? "";
  const mult = BINARY[suffix] ?? DECIMAL[suffix];
  return mult === undefined ? undefined : base * mult;
}
