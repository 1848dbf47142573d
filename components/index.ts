export * as docker from "./docker";
export * as kubernetes from "./kubernetes";
export * as spec from "./model";
