/**
 * The agent process of the two-process quickstart (docs/quickstart.md). Run the kernel in one
 * terminal (`rebuno-dev --config rebuno.yaml`) and this file in another.
 */
// #region agent
import { Agent, defineTool, step } from "@rebuno/sdk";
import { z } from "zod";

const greet = defineTool({
  name: "greet",
  description: "Write a greeting",
  input: z.object({ name: z.string() }),
  execute: async ({ name }) => `hello, ${name}`,
});

// The kernel URL and the agent secret come from REBUNO_URL and REBUNO_AGENT_SECRET.
const agent = new Agent("greeter", async (input: { name: string }) => {
  const greeting = await greet({ name: input.name });
  const ticket = await step("ticket", () => Math.floor(Math.random() * 1000));
  return `${greeting} (ticket ${ticket})`;
});

const server = await agent.serve({ host: "127.0.0.1", port: Number(process.env.AGENT_PORT ?? 8000) });
console.log(`agent greeter listening on ${server.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void server.close());
}
// #endregion
