import * as pulumi from "@pulumi/pulumi";
import * as settings from "@pulumi/pulumi/runtime/settings";

// Both are exported by the SDK's runtime but marked internal in its typings.
const internals = settings as unknown as { waitForRPCs(): Promise<void>; getMonitor(): unknown };
const waitForRPCs = () => internals.waitForRPCs();
const getMonitor = () => internals.getMonitor();

/** One resource the program registered, as the engine would have received it. */
export interface Registered {
  readonly type: string;
  readonly name: string;
  readonly urn: string;
  /** The registered inputs, with outputs resolved. */
  readonly inputs: Record<string, unknown>;
  readonly custom: boolean;
}

/**
 * Installs Pulumi mocks that record every registered resource (custom and component) with its inputs. Resources
 * echo their inputs as state, with an id derived from the name, as a real provider would on create.
 */
export async function recordingMocks(
  options: {
    project?: string;
    stack?: string;
    preview?: boolean;
    config?: Record<string, string>;
    /** Extra state a resource reports after create, as a provider would (e.g. a container's logs). */
    state?: (type: string, name: string, inputs: Record<string, unknown>) => Record<string, unknown>;
  } = {},
): Promise<{ registered: Registered[]; settle: () => Promise<Registered[]> }> {
  const seen: { type: string; name: string; inputs: Record<string, unknown>; custom: boolean }[] = [];
  if (options.config !== undefined) pulumi.runtime.setAllConfig(options.config);
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        seen.push({ type: args.type, name: args.name, inputs: args.inputs, custom: args.custom ?? true });
        const extra = options.state?.(args.type, args.name, args.inputs) ?? {};
        return {
          id: args.custom === false ? undefined : `${args.name}-id`,
          state: { ...args.inputs, ...extra },
        };
      },
      call: (args) => args.inputs,
    },
    options.project ?? "sandbox",
    options.stack ?? "dev",
    options.preview ?? false,
  );
  const registered: Registered[] = [];
  const settle = async () => {
    await waitForRPCs();
    const monitor = getMonitor() as unknown as { getRegisteredResources(): Map<string, { urn: string }> };
    const urns = [...monitor.getRegisteredResources().keys()];
    registered.length = 0;
    for (const r of seen) {
      const urn =
        urns.find((u) => u.endsWith(`::${r.name}`) && u.split("::")[2]?.split("$").pop() === r.type) ?? "";
      registered.push({ ...r, urn });
    }
    return registered;
  };
  return { registered, settle };
}

/** The value of an output, for assertions (never assert inside an apply the test does not await). */
export function outputValue<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}

/** The registered outputs of a component, as the engine stored them. */
export function registeredOutputs(urn: string): Record<string, unknown> | undefined {
  const monitor = getMonitor() as unknown as {
    getRegisteredResources(): Map<string, { state: unknown }>;
  };
  const state = monitor.getRegisteredResources().get(urn)?.state as
    | { toJavaScript?: () => Record<string, unknown> }
    | Record<string, unknown>
    | undefined;
  if (state === undefined) return undefined;
  return typeof state.toJavaScript === "function"
    ? (state.toJavaScript as () => Record<string, unknown>)()
    : (state as Record<string, unknown>);
}

/** The single registered resource of `type` named `name`, or a failure that lists what was registered. */
export function one(registered: readonly Registered[], type: string, name: string): Registered {
  const found = registered.filter((r) => r.type === type && r.name === name);
  if (found.length !== 1) {
    throw new Error(
      `expected one ${type} named ${name}, found ${found.length}; registered: ${registered.map((r) => `${r.type}/${r.name}`).join(", ")}`,
    );
  }
  return found[0] as Registered;
}
