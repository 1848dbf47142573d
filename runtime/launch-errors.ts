/** Why a launch did not happen, each refused before any container was created, and the check that refuses it. */
import type Dockerode from "dockerode";
import type { LaunchSpec } from "../components/model";
import { isNotFound } from "./docker/client";

/**
 * Judges the exact Engine API create body before launch (runtime/docker/taskContainer.ts); returns the violation
 * messages (empty when clean).
 */
export type Preflight = (body: Dockerode.ContainerCreateOptions, spec: LaunchSpec) => readonly string[];

/** A launch refused before any container was created. */
export class LaunchRefused extends Error {
  readonly violations: readonly string[];
  constructor(template: string, violations: readonly string[]) {
    super(`launch of template "${template}" refused:\n${violations.map((v) => `  - ${v}`).join("\n")}`);
    this.name = "LaunchRefused";
    this.violations = violations;
  }
}

/** The template's image is not on the engine: nothing is ever pulled, so the launch cannot happen. */
export class ImageMissing extends Error {
  constructor(
    readonly image: string,
    readonly template: string,
  ) {
    super(
      `image "${image}" of template "${template}" is not on the local Docker engine, and the toolkit never pulls ` +
        "one. Build the offline images with `bash toolchain/docker.sh`, or build or load your own image and name it " +
        `in the template (sandbox:templates.${template}.image). Nothing was started.`,
    );
    this.name = "ImageMissing";
  }
}

/**
 * The template's runtime (`runsc`, `kata`) is not registered with the engine: the launch is refused before anything
 * is created, never run under another runtime.
 */
export class RuntimeMissing extends Error {
  constructor(
    readonly runtime: string,
    readonly template: string,
    readonly available: readonly string[],
  ) {
    super(
      `template "${template}" runs under the runtime "${runtime}", and the Docker engine has no runtime "${runtime}" registered (it has: ${available.join(", ") || "none"}); ` +
        (runtime === "runsc"
          ? "build and register gVisor with `bash toolchain/runsc.sh`. "
          : `install ${runtime} and register it in the engine's daemon.json (runtimes). `) +
        "The task never falls back to another runtime; nothing was started.",
    );
    this.name = "RuntimeMissing";
  }
}

/** True for the engine's answer to a create or start whose image is not there. */
export function isImageMissing(e: unknown): boolean {
  return isNotFound(e) && /no such image/i.test(String((e as { message?: unknown }).message ?? e));
}
