import { disallowHostPathClaims } from "./disallow-host-path-claims";
import { disallowLinkedCredentials } from "./disallow-linked-credentials";
import { disallowOpenBridge } from "./disallow-open-bridge";
import { disallowSecretFlow } from "./disallow-secret-flow";
import { disallowUnjudgedReferences } from "./disallow-unjudged-references";
import { disallowWeakRuntimeClass } from "./disallow-weak-runtime-class";
import { requireBudgetBound } from "./require-budget-bound";
import { requireProxyOnlyEgress } from "./require-proxy-only-egress";
import type { AnyStackRule } from "./types";

/** Every stack rule. */
export const ALL_STACK_RULES: readonly AnyStackRule[] = [
  requireBudgetBound,
  disallowSecretFlow,
  requireProxyOnlyEgress,
  disallowHostPathClaims,
  disallowLinkedCredentials,
  disallowWeakRuntimeClass,
  disallowOpenBridge,
  disallowUnjudgedReferences,
];
