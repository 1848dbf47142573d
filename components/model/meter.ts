/**
 * The meter's configuration: the agents that may launch tasks (each with the templates it may use, a monthly cap
 * and a concurrency of its own) and where alerts go. The ledger (runtime/ledger/index.ts) applies both.
 */
import { z } from "zod";
import { strictObject } from "./errors";

const AGENT_RULE =
  "lower-case letters, digits, ., _ and -, starting with a letter or digit, at most 64 characters";
/** An agent's name as a task request and the ledger carry it. */
export const AGENT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** One agent's profile: what it may launch and spend. */
export const AgentSchema = strictObject({
  /** The templates the agent may launch. Defaults to every template of the project. */
  templates: z
    .array(z.string({ error: "a template name" }), {
      error: "templates must be a list of template names",
    })
    .min(1, { error: "templates must name at least one template (leave it out to allow every template)" })
    .optional(),
  /** The agent's own monthly cap in US dollars, at most the project's. Defaults to the project's cap. */
  monthlyCapUsd: z
    .number({ error: "the agent's monthly cap must be a number of US dollars, 0 or more" })
    .min(0, { error: "the agent's monthly cap must be a number of US dollars, 0 or more" })
    .optional(),
  /** The agent's tasks that may run at once, at most the project's. Defaults to the project's concurrency. */
  maxConcurrentTasks: z
    .number({ error: "the agent's concurrency must be a whole number between 1 and 10000" })
    .int({ error: "the agent's concurrency must be a whole number between 1 and 10000" })
    .min(1, { error: "the agent's concurrency must be a whole number between 1 and 10000" })
    .max(10_000, { error: "the agent's concurrency must be a whole number between 1 and 10000" })
    .optional(),
});
export type Agent = z.output<typeof AgentSchema>;

/**
 * The agents by name. With none, any launch is admitted under the project's limits (its agent, if named, is only
 * recorded); with some, every launch must name one of them and a template of its profile.
 */
export const AgentsSchema = z.record(
  z.string().regex(AGENT_NAME, { error: `agent names must be ${AGENT_RULE}` }),
  AgentSchema,
  {
    error: (iss) =>
      iss.code === "invalid_type" ? "agents must be a mapping of agent name to profile" : undefined,
  },
);
export type Agents = z.output<typeof AgentsSchema>;

/** Where alerts go besides the ledger's own record. */
export const AlertSinksSchema = strictObject({
  /** One line per alert on the launching process's stderr. Defaults to `true`. */
  stderr: z.boolean({ error: "alerts.stderr must be true or false" }).default(true),
  /** A JSON-lines file each alert is appended to (an absolute host path). Defaults to none. */
  file: z
    .string({ error: "alerts.file must be an absolute host path" })
    .regex(/^\/./, { error: "alerts.file must be an absolute host path" })
    .optional(),
  /**
   * An HTTP(S) URL each alert is POSTed to as JSON, retried (three tries), never blocking a launch. Defaults to
   * none.
   */
  webhook: z
    .string({ error: "alerts.webhook must be an http:// or https:// URL" })
    .refine(
      (u) => {
        try {
          const url = new URL(u);
          return (
            (url.protocol === "http:" || url.protocol === "https:") &&
            url.username === "" &&
            url.password === ""
          );
        } catch {
          return false;
        }
      },
      { error: "alerts.webhook must be an http:// or https:// URL without credentials in it" },
    )
    .optional(),
});
export type AlertSinks = z.output<typeof AlertSinksSchema>;

/** The kinds of alert the ledger raises. */
export const ALERT_KINDS = [
  "budget-80",
  "budget-90",
  "budget-100",
  "agent-budget-100",
  "launch-refused",
  "proxy-refused",
  "broker-refused",
  "limit-hit",
  "launcher-kill",
  "stopped-by-cap",
  "escape-check",
  "reconciled",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
