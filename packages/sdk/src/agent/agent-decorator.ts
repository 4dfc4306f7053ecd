/**
 * `@agent(id, options)`: class decorator form of `static id` / `static inputSchema`; works as a
 * TC39 decorator and under `experimentalDecorators`.
 */
import "../polyfill.js";
import { ConfigurationError } from "@rebuno/protocol";
import type { StandardSchemaV1 } from "../standard-schema.js";

/** What `@agent` records about a class. */
export interface AgentClassConfig {
  readonly id: string;
  readonly inputSchema?: StandardSchemaV1 | undefined;
}

const configs = new WeakMap<Function, AgentClassConfig>();

/** The `@agent` configuration of `ctor` or its nearest decorated ancestor. */
export function agentConfigOf(ctor: Function): AgentClassConfig | undefined {
  for (let c: unknown = ctor; typeof c === "function"; c = Object.getPrototypeOf(c)) {
    const found = configs.get(c);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Declares the agent id (and input schema) of an `Agent` subclass.
 *
 * @example
 * ```ts
 * import { Agent, agent } from "@rebuno/sdk";
 * import { TestEnvironment } from "@rebuno/testing";
 * import { z } from "zod";
 *
 * @agent("support", { inputSchema: z.object({ question: z.string() }) })
 * class Support extends Agent<{ question: string }, string> {
 *   override async run(input: { question: string }) {
 *     return input.question;
 *   }
 * }
 *
 * const env = await TestEnvironment.create({ agents: [Support] });
 * const { output } = await env.run(Support, { question: "where is my refund?" }); // "where is my refund?"
 * await env.teardown();
 * ```
 */
export function agent(id: string, options: { readonly inputSchema?: StandardSchemaV1 } = {}) {
  if (typeof id !== "string" || id.trim() === "") throw new ConfigurationError("agentId must not be empty");
  // TC39 class decorators receive (class, context); `experimentalDecorators` ones just (class).
  return <C extends abstract new (...args: never[]) => unknown>(
    value: C,
    context?: ClassDecoratorContext<C>,
  ): void => {
    const legacy = context === undefined && typeof value === "function";
    if (!legacy && (typeof context !== "object" || context === null || context.kind !== "class")) {
      throw new ConfigurationError("@agent must decorate a class");
    }
    configs.set(value, { id, inputSchema: options.inputSchema });
  };
}
