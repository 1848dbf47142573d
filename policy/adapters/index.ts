export * from "./docker";
export * from "./docker-common";
export * from "./kubernetes";
export * from "./launch";
export * from "./read";
export * from "./service";
export * from "./subject";
