// A launcher process of its own for test/runtime/orphan.test.ts: launches one task of each template named (task id
// `<template>-<tag>`) with the ledger at <file>, each with <command>, says "started <id>" once its container runs,
// and waits to be killed.
//   orphan-worker.ts <file> <project json> <tag> <command json> <template>...
import type { ResolvedProject } from "../../components/model";
import { dockerClient } from "../../runtime/docker/client";
import { Launcher } from "../../runtime/launcher";
import { Ledger, meterOf } from "../../runtime/ledger";
import { policyPreflight } from "../../runtime/preflight";
import { specOf } from "../helpers/docker";

const [file = "", json = "{}", tag = "", command = "[]", ...templates] = process.argv.slice(2);
const project = JSON.parse(json) as ResolvedProject;
const ledger = Ledger.open(file, meterOf(project));
const docker = dockerClient();
const launcher = new Launcher(docker, {
  preflight: policyPreflight(),
  ledger,
  graceSeconds: 1,
  onEvent: (e) => {
    if (e.type !== "start") return;
    const wait = setInterval(async () => {
      const running = await docker.listContainers({ filters: { label: [`sandbox.task=${e.id}`] } });
      if (running.length > 0) {
        clearInterval(wait);
        process.stdout.write(`started ${e.id}\n`);
      }
    }, 100);
  },
});
for (const template of templates) {
  void launcher.run(specOf(project, template), {
    id: `${template}-${tag}`,
    command: JSON.parse(command) as string[],
  });
}
