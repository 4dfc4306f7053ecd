/**
 * The legacy-decorator toolbox and agent: the same `@tool`, `@agent` and `Toolbox` as everywhere
 * else, compiled with `experimentalDecorators` and `emitDecoratorMetadata` (see tsconfig.json).
 */
import { Agent, agent, Toolbox, ToolError, tool } from "@rebuno/sdk";
import { z } from "zod";
import { Injectable, resolve } from "./di.js";

// #region injectable-toolbox
@Injectable()
export class Inventory {
  readonly #stock = new Map([
    ["tea", 12],
    ["mug", 3],
  ]);

  available(sku: string): number {
    return this.#stock.get(sku) ?? 0;
  }

  take(sku: string, quantity: number): number {
    const left = this.available(sku) - quantity;
    if (left < 0) throw new Error(`only ${this.available(sku)} ${sku} left`);
    this.#stock.set(sku, left);
    return left;
  }
}

const StockInput = z.object({ sku: z.string() });
const ReserveInput = z.object({ sku: z.string(), quantity: z.number().int().positive() });

/** A toolbox the container builds: its constructor dependency comes from `design:paramtypes`. */
@Injectable()
export class OrderTools extends Toolbox {
  constructor(private readonly inventory: Inventory) {
    super();
  }

  @tool("check_stock", { input: StockInput, description: "How many units of a SKU are in stock" })
  async checkStock(args: z.infer<typeof StockInput>): Promise<{ sku: string; available: number }> {
    return { sku: args.sku, available: this.inventory.available(args.sku) };
  }

  @tool("reserve", { input: ReserveInput, idempotency: "at_most_once", description: "Reserve units" })
  async reserve(args: z.infer<typeof ReserveInput>): Promise<{ sku: string; remaining: number }> {
    return { sku: args.sku, remaining: this.inventory.take(args.sku, args.quantity) };
  }
}
// #endregion

export interface ShopInput {
  readonly sku: string;
  readonly quantity: number;
}

// #region legacy-agent
@agent("legacy-shop")
export class LegacyShop extends Agent<ShopInput, string> {
  readonly tools = resolve(OrderTools);

  override async run(input: ShopInput): Promise<string> {
    const stock = await this.tools.checkStock({ sku: input.sku });
    if (stock.available < input.quantity) return `sorry, only ${stock.available} ${input.sku} left`;
    try {
      const reserved = await this.tools.reserve({ sku: input.sku, quantity: input.quantity });
      return `reserved ${input.quantity} × ${reserved.sku}, ${reserved.remaining} left`;
    } catch (error) {
      if (ToolError.isInstance(error) && error.reason === "denied")
        return `not reserved (${error.policyReason})`;
      throw error;
    }
  }
}
// #endregion

/**
 * What `emitDecoratorMetadata` adds: the method's declared parameters are checked against the
 * tool contract when the class is defined. Returns the ConfigurationError's message.
 */
export function defineMismatchedToolbox(): string {
  try {
    // #region mismatch
    class Calculator extends Toolbox {
      // Two parameters: a tool receives one argument object, so this class is refused.
      @tool("add", { input: z.object({ a: z.number(), b: z.number() }) })
      async add(a: number, b: number): Promise<number> {
        return a + b;
      }
    }
    // #endregion
    return `defined ${Calculator.name}`;
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}
