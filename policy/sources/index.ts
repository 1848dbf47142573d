export * from "./docker/read";
export * from "./docker/spellings";
export * from "./kubernetes/service";
export * from "./kubernetes/workloads";
export * from "./lenient";
export * from "./pulumi/container";
export * from "./subject";
