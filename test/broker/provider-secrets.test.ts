/**
 * The local Docker provider and Pulumi secrets: the engine hands a provider that accepts secrets each secret value
 * wrapped; the provider sends the Engine API plain values and gives the state back, as secrets, every output whose
 * input held one (a broker's credentials must never reach the state in the clear).
 */
import { describe, expect, it } from "vitest";
import {
  holdsSecret,
  rewrapSecrets,
  secretKeys,
  unwrapSecrets,
  wrapSecret,
} from "../../providers/docker/secrets";

describe("secrets in the local Docker provider", () => {
  const inputs = {
    name: "demo-broker",
    envs: ["SANDBOX_BROKER_CONFIG=x", wrapSecret("SANDBOX_BROKER_CRED_GH=tok")],
    labels: [{ label: "a", value: "b" }],
  };

  it("unwraps every secret, at any depth, for the Engine API", () => {
    expect(unwrapSecrets(inputs)).toEqual({
      name: "demo-broker",
      envs: ["SANDBOX_BROKER_CONFIG=x", "SANDBOX_BROKER_CRED_GH=tok"],
      labels: [{ label: "a", value: "b" }],
    });
    expect(unwrapSecrets(wrapSecret(wrapSecret("v")))).toBe("v");
  });

  it("wraps again exactly the outputs whose inputs held a secret", () => {
    expect(secretKeys(inputs)).toEqual(["envs"]);
    const outs = rewrapSecrets({ ...unwrapSecrets(inputs), exitCode: 0 }, secretKeys(inputs));
    expect(holdsSecret(outs.envs)).toBe(true);
    expect(unwrapSecrets(outs.envs)).toEqual(["SANDBOX_BROKER_CONFIG=x", "SANDBOX_BROKER_CRED_GH=tok"]);
    expect(holdsSecret(outs.name)).toBe(false);
    expect(holdsSecret(outs.exitCode)).toBe(false);
    // Wrapping twice would hide the value from the engine: a wrapped output stays as it is.
    expect(rewrapSecrets(outs, ["envs"]).envs).toEqual(outs.envs);
  });
});
