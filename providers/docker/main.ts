// The entry point the engine starts as `pulumi-resource-docker` (see providers/docker/pulumi-resource-docker).
import { main } from "@pulumi/pulumi/provider";
import { dockerClient } from "../../runtime/docker/client";
import { dockerProvider } from "./provider";

// The engine that started this provider owns it: when the engine is gone (killed, or it exited without stopping its
// plugins), this process was handed to another parent, and it stops instead of serving no one for ever.
const engine = process.ppid;
setInterval(() => {
  if (process.ppid !== engine) process.exit(0);
}, 1000).unref();

main(dockerProvider(dockerClient()), process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`pulumi-resource-docker: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
