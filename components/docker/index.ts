export * from "./containerArgs";
export * from "./sandboxProject";
export * from "./taskTemplate";
