export * from "./namespace";
export * from "./network-policies";
export * from "./pod";
export * from "./proxy";
export * from "./quantities";
export * from "./quota";
export * from "./sandboxProject";
