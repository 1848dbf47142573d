export * from "./disallow-secret-flow";
export * from "./registry";
export * from "./require-budget-bound";
export * from "./require-proxy-only-egress";
export * from "./spend";
export * from "./types";
