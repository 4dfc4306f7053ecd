/**
 * The hello example's shop agent on the dev kernel, under its own policy: the tea order goes
 * through, and the denied mug order is reported by the agent (a ToolError with reason "denied"),
 * never as `undefined × undefined` from a denial string read as an order.
 */
import { TestEnvironment } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";
import { SHOP_POLICY, ShopAgent } from "../main.js";

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
});

describe("examples/hello", () => {
  it("orders tea, and reports the policy's refusal of a mug order", async () => {
    env = await TestEnvironment.create({ agents: [ShopAgent], policy: SHOP_POLICY });
    const tea = await env.run<string>(ShopAgent, { sku: "tea", quantity: 2 });
    expect(tea.execution.status).toBe("completed");
    expect(tea.output).toMatch(/^ord-[0-9a-f]{8}: 2 × tea ordered, 10 left$/);
    const mug = await env.run<string>(ShopAgent, { sku: "mug", quantity: 1 });
    expect(mug.execution.status).toBe("completed");
    expect(mug.output).toMatch(/^ord-[0-9a-f]{8}: not ordered \(mug orders are paused\)$/);
    expect(mug.steps.map((s) => [s.target, s.status])).toEqual([
      ["check_stock", "succeeded"],
      ["order_id", "succeeded"],
      ["place_order", "denied"],
    ]);
  });

  it("advertises check_stock's argument to LLMs", () => {
    const shop = new ShopAgent({ secret: "x".repeat(32), baseUrl: "http://127.0.0.1:9" }).shop;
    expect(shop.tool("check_stock")?.inputSchema).toMatchObject({
      type: "object",
      properties: { sku: { type: "string" } },
      required: ["sku"],
    });
  });
});
