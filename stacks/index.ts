// The program `pulumi up` runs with the official CLI (Pulumi.yaml `main: stacks/index.ts`).
import { sandboxProgram } from "./program";

export = sandboxProgram();
