/** docs/migration.md: code written for the official SDK, unchanged (run by ../official-api.test.ts). */
// #region official-style
import { Agent, APIError, defineTool, step } from "@rebuno/sdk";
import { z } from "zod";

const lookup = defineTool({
  name: "lookup",
  description: "Look a SKU up",
  inputSchema: z.object({ sku: z.string() }),
  idempotency: "safe_to_retry",
  execute: async ({ sku }) => ({ sku, stock: sku.length }),
});

export async function serveInventory(secret: string, baseUrl: string, port: number) {
  const agent = new Agent<{ sku: string }, unknown>("inventory", { secret, baseUrl });
  return agent.serve({ host: "127.0.0.1", port }, async (input) => {
    const found = await lookup({ sku: input.sku });
    const reservation = await step("reserve", ({ sku }) => `res-${sku}`, { sku: input.sku }, "at_most_once");
    return { ...found, reservation };
  });
}

export function describeFailure(error: unknown): string {
  return error instanceof APIError ? `kernel said ${error.statusCode} ${error.code}` : String(error);
}
// #endregion
