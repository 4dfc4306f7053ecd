/**
 * The toolbox every docs/frameworks.md snippet exports. It is compiled and exercised by
 * test/adapters/frameworks-e2e.test.ts, so the documentation cannot drift from the API.
 */
import { defineTool, Toolbox, tool } from "@rebuno/sdk";
import { z } from "zod";

// #region toolbox
export class Support extends Toolbox {
  @tool("lookup_order", {
    description: "Look up an order by id",
    input: z.object({ id: z.string(), includeItems: z.boolean().optional() }),
  })
  async lookupOrder({ id, includeItems }: { id: string; includeItems?: boolean | undefined }) {
    return { id, status: "shipped", items: includeItems ? ["book"] : undefined };
  }

  @tool("refund", {
    description: "Refund an order",
    idempotency: "at_most_once",
    input: z.object({ id: z.string(), cents: z.number().int().positive() }),
  })
  async refund({ id, cents }: { id: string; cents: number }) {
    return `refunded ${cents} cents on ${id}`;
  }
}

export const weather = defineTool({
  name: "weather",
  description: "Current weather for a city",
  input: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 18 }),
});
// #endregion
