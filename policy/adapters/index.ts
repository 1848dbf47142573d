export * from "../sources/docker/read";
export * from "./docker";
export * from "./docker-common";
export * from "./kubernetes";
export * from "./read";
export * from "./service";
export * from "./subject";
