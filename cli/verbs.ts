/** The verbs that act on a stack through the engine (and `check`, which only reads its config). */
export const STACK_VERBS = ["check", "preview", "up", "refresh", "destroy"] as const;

/** The task verbs: they drive the local Docker engine directly, from the stack's validated templates. */
export const TASK_VERBS = ["run", "probe", "escape", "off"] as const;
export type TaskVerb = (typeof TASK_VERBS)[number];
