/**
 * A shop assistant driven by the Vercel AI SDK: it checks the stock itself, then lets the model
 * decide whether to order. The model is reached through `rebunoFetch`, so each model call is a
 * recorded `llm_call` step and every tool call a `tool_call` step; replaying a recording answers
 * both from the file, with no provider and no kernel.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { Agent, type AgentOptions, createRebunoFetch, Toolbox, tool, toVercelTools } from "@rebuno/sdk";
import { generateText, stepCountIs } from "ai";
import { z } from "zod";

// #region replay-agent
export class Shop extends Toolbox {
  @tool("check_stock", { description: "Units of a SKU in stock", input: z.object({ sku: z.string() }) })
  async checkStock(args: { sku: string }) {
    return { sku: args.sku, available: args.sku === "tea" ? 12 : 0 };
  }

  @tool("place_order", {
    description: "Order units of a SKU",
    idempotency: "at_most_once",
    input: z.object({ sku: z.string(), quantity: z.number().int().positive() }),
  })
  async placeOrder(args: { sku: string; quantity: number }) {
    return { orderId: `ord-${args.sku}-${args.quantity}`, ...args };
  }
}

export type Order = { readonly sku: string; readonly quantity: number };

export class ShopAssistant extends Agent<Order, string> {
  static override id = "shop-assistant";
  readonly shop = new Shop();
  readonly #model;

  /** `providerFetch` reaches the model's HTTP API (a scripted one when recording, see record.ts). */
  constructor(options: AgentOptions, providerFetch: typeof fetch) {
    super(options);
    const openai = createOpenAI({ apiKey: "scripted", fetch: createRebunoFetch({ fetch: providerFetch }) });
    this.#model = openai.chat("gpt-4o-mini");
  }

  /** The stock query; tests change it to show a divergence. */
  protected stockQuery(order: Order): { sku: string } {
    return { sku: order.sku };
  }

  override async run(order: Order): Promise<string> {
    const stock = await this.shop.checkStock(this.stockQuery(order));
    const { text } = await generateText({
      model: this.#model,
      tools: toVercelTools(this.shop.tools.filter((t) => t.name === "place_order")),
      stopWhen: stepCountIs(3),
      prompt: `A customer wants ${order.quantity} × ${order.sku}; ${stock.available} in stock. Order if you can.`,
    });
    return text;
  }
}
// #endregion
