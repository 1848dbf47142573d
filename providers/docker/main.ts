// The entry point the engine starts as `pulumi-resource-docker` (see providers/docker/pulumi-resource-docker).
import { main } from "@pulumi/pulumi/provider";
import { dockerClient } from "../../runtime/docker/client";
import { dockerProvider } from "./provider";

main(dockerProvider(dockerClient()), process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`pulumi-resource-docker: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
