export * from "./disallow-secret-flow";
export * from "./registry";
export * from "./require-budget-bound";
export * from "./spend";
export * from "./types";
