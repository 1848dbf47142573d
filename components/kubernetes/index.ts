export * from "./manifests";
export * from "./sandboxProject";
