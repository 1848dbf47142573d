/**
 * One watch of a namespace's task pods, shared by every task of the process: a list, then a watch from the list's
 * `resourceVersion`, resumed from the last version seen when the connection drops, and a fresh list when the server
 * says that version is too old (410). Tasks wait on it for their pod's changes instead of reading the pod over and
 * over: the API requests of a task no longer grow with its length.
 */
import type * as K8s from "@kubernetes/client-node";
import { LABELS } from "../../components/model";

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the API server sends them, read field by field
type Pod = any;

/** Which pods the watch follows: the project's task pods. */
const TASK_PODS = `${LABELS.role}=task`;
const JOB_LABEL = "batch.kubernetes.io/job-name";

export class PodWatch {
  /** The latest state of each task pod, by its Job's name. */
  private readonly pods = new Map<string, Pod>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private version: string | undefined;
  private abort: AbortController | undefined;
  private started: Promise<void> | undefined;
  private closed = false;
  private users = 0;
  /** API requests this watch made: lists and watch connections. */
  requests = 0;

  constructor(
    private readonly config: K8s.KubeConfig,
    private readonly core: K8s.CoreV1Api,
    readonly namespace: string,
  ) {}

  /** Starts the watch on first use (a list, then the watch); later calls share it. */
  use(): Promise<void> {
    this.users++;
    this.closed = false;
    this.started ??= this.relist().catch((e: unknown) => {
      this.started = undefined;
      throw e;
    });
    return this.started;
  }

  /** True while a task uses the watch. */
  get active(): boolean {
    return this.users > 0;
  }

  /** One user less; the last one stops the watch. */
  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users > 0) return;
    this.closed = true;
    this.abort?.abort();
    this.abort = undefined;
    this.started = undefined;
    this.pods.clear();
  }

  /** The pod of a Job as last seen, or undefined when none was seen (or it was deleted). */
  pod(jobName: string): Pod | undefined {
    return this.pods.get(jobName);
  }

  /** Resolves at the next change of the Job's pod, or after `ms`, whichever comes first. */
  next(jobName: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(jobName) ?? new Set();
      this.waiters.set(jobName, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(jobName);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
    });
  }

  private notify(jobName: string): void {
    for (const w of [...(this.waiters.get(jobName) ?? [])]) w();
  }

  private put(pod: Pod, deleted: boolean): void {
    const job = pod?.metadata?.labels?.[JOB_LABEL];
    if (typeof job !== "string") return;
    if (deleted) this.pods.delete(job);
    else this.pods.set(job, pod);
    this.notify(job);
  }

  /** Lists the pods (the cache anew) and watches from the list's version. */
  private async relist(): Promise<void> {
    this.requests++;
    const list = await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: TASK_PODS });
    const seen = new Set<string>();
    for (const pod of list.items) {
      this.put(pod, false);
      const job = (pod as Pod)?.metadata?.labels?.[JOB_LABEL];
      if (typeof job === "string") seen.add(job);
    }
    // Pods deleted while no watch was open: gone from the list, gone from the cache.
    for (const job of [...this.pods.keys()]) {
      if (!seen.has(job)) {
        this.pods.delete(job);
        this.notify(job);
      }
    }
    this.version = list.metadata?.resourceVersion;
    await this.watch();
  }

  private async watch(): Promise<void> {
    if (this.closed) return;
    const { Watch } = await import("@kubernetes/client-node");
    this.requests++;
    this.abort = await new Watch(this.config).watch(
      `/api/v1/namespaces/${this.namespace}/pods`,
      {
        labelSelector: TASK_PODS,
        allowWatchBookmarks: true,
        ...(this.version === undefined ? {} : { resourceVersion: this.version }),
      },
      (type, obj) => {
        const version = obj?.metadata?.resourceVersion;
        if (typeof version === "string") this.version = version;
        if (type === "ADDED" || type === "MODIFIED") this.put(obj, false);
        else if (type === "DELETED") this.put(obj, true);
        else if (type === "ERROR" && obj?.code === 410) this.version = undefined;
      },
      (err) => this.reconnect(err),
    );
  }

  /** The watch ended (the server closes it now and then, or the connection dropped): resume, or list anew. */
  private reconnect(err: unknown): void {
    if (this.closed) return;
    const gone = (err as { statusCode?: number; code?: number } | null)?.statusCode === 410;
    if (gone) this.version = undefined;
    const again = () => (this.version === undefined ? this.relist() : this.watch());
    setTimeout(
      () => {
        again().catch(() => this.reconnect(undefined));
      },
      err === undefined || err === null ? 0 : 500,
    ).unref();
  }
}

/** The watches of this process, one per cluster and namespace. */
const watches = new Map<string, PodWatch>();

/** The shared watch of a namespace's task pods on the cluster `server`. */
export function podWatch(
  config: K8s.KubeConfig,
  core: K8s.CoreV1Api,
  server: string,
  namespace: string,
): PodWatch {
  const key = `${server} ${namespace}`;
  let w = watches.get(key);
  if (w === undefined) {
    w = new PodWatch(config, core, namespace);
    watches.set(key, w);
  }
  return w;
}
