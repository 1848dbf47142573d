export * as docker from "./docker";
export * as spec from "./spec";
