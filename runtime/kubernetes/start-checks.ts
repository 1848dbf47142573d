/**
 * Whether a task's pod will ever start, judged on each change of it while it has not run (KubeLauncher's
 * supervision): no pod made for its Job (a quota, an admission refusal), no node taking it, an image the node does
 * not have (nothing is pulled), a runtime handler the node lacks. Each is a LaunchRefused that names the cause. The
 * API server is asked only what a change calls for, never on a timer of its own.
 */
import type { LaunchSpec } from "../../components/model";
import { LaunchRefused } from "../launch-errors";
import type { KubeApis } from "./api";
import { missingHandler } from "./runtime-class";
import { creationRefusal } from "./task-objects";

/** Seconds a pod may wait to be created and scheduled before the launch is given up (quota, no node, no image). */
export const START_TIMEOUT_SECONDS = 60;

/** Container states that mean the image will never be there: nothing is pulled from a registry. */
const IMAGE_MISSING = new Set(["ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName"]);

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the client returns them, read field by field
type Obj = any;

/** The start checks of one task's pod, from its Job's creation (`started`, ms) until the pod runs. */
export class StartChecks {
  private readonly startBy: number;
  private checked: string | undefined;
  private refusalCheck: number;
  private handlerCheck: number;

  constructor(
    private readonly apis: KubeApis,
    private readonly namespace: string,
    private readonly spec: LaunchSpec,
    private readonly jobName: string,
    private readonly started: number,
  ) {
    this.startBy = started + START_TIMEOUT_SECONDS * 1000;
    this.refusalCheck = started + 2000;
    this.handlerCheck = started + 2000;
  }

  /** Throws LaunchRefused when the task's pod (undefined: none made yet) can never start. */
  async check(pod: Obj | undefined): Promise<void> {
    const { spec } = this;
    if (pod === undefined) {
      if (Date.now() >= this.refusalCheck) {
        this.refusalCheck = Date.now() + 5000;
        const refusal = await creationRefusal(
          this.apis,
          this.namespace,
          this.jobName,
          Date.now() - this.started,
        );
        if (refusal !== undefined) throw new LaunchRefused(spec.template, [refusal]);
      }
      if (Date.now() > this.startBy)
        throw new LaunchRefused(spec.template, [
          `the cluster made no pod for Job ${this.jobName} in ${START_TIMEOUT_SECONDS} s`,
        ]);
      return;
    }
    if (pod.status?.phase !== "Pending") return;
    // Checked on every change of the pod; and under a runtime other than runc, once on the node, every 2 s as well:
    // a handler the node lacks is said in an event, which changes nothing of the pod.
    const handlerDue =
      spec.runtime !== "runc" && pod.spec?.nodeName !== undefined && Date.now() >= this.handlerCheck;
    if (pod.metadata?.resourceVersion !== this.checked || handlerDue) {
      this.checked = pod.metadata?.resourceVersion;
      this.handlerCheck = Date.now() + 2000;
      await this.checkPending(pod);
    }
    if (Date.now() > this.startBy && pod.spec?.nodeName === undefined) {
      const why = (pod.status?.conditions ?? []).find((c: Obj) => c.type === "PodScheduled")?.message;
      throw new LaunchRefused(spec.template, [
        `no node took the task's pod in ${START_TIMEOUT_SECONDS} s${why ? `: ${why}` : ""}`,
      ]);
    }
  }

  /** A pending pod that can never start: its image is not on the node, or the node lacks its runtime's handler. */
  private async checkPending(pod: Obj): Promise<void> {
    const { spec } = this;
    const waiting = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
      .map((s: Obj) => s.state?.waiting)
      .find((w: Obj) => w !== undefined && IMAGE_MISSING.has(w.reason));
    if (waiting !== undefined) {
      throw new LaunchRefused(spec.template, [
        `image "${spec.image}" is not on the cluster's node (${waiting.reason}: ${waiting.message ?? ""}); the toolkit never pulls one: load it into the node's runtime`,
      ]);
    }
    if (spec.runtime === "runc" || pod.spec?.nodeName === undefined) return;
    const missing = await missingHandler(this.apis, this.namespace, pod);
    if (missing !== undefined) {
      throw new LaunchRefused(spec.template, [
        `the node ${pod.spec.nodeName} cannot run RuntimeClass "${pod.spec.runtimeClassName}" (runtime ${spec.runtime}): ${missing}; configure its handler in the node's container runtime, or run the template with runtime runc`,
      ]);
    }
  }
}
