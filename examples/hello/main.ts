/**
 * Hello, Rebuno: a decorated toolbox and a class-based agent, run end to end on the embedded
 * dev kernel. Run it with `pnpm hello` from the repository root.
 *
 * What happens:
 * 1. an in-process dev kernel starts on loopback, with a small policy (mug orders are paused);
 * 2. the agent serves its webhook on loopback and is registered with the kernel;
 * 3. two executions are created; the kernel delivers each to the agent, whose handler calls two
 *    tools (each a recorded `tool_call` step) and a `step()` (a recorded `local` step). The tea
 *    order goes through; the policy denies the mug order and the agent says so;
 * 4. each finished execution's steps are printed as a table.
 */
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { Client } from "@rebuno/client";
import { startDevKernel } from "@rebuno/dev-kernel";
import { Agent, step, Toolbox, ToolError, tool } from "@rebuno/sdk";
import { z } from "zod";

// --- tools: one safe to retry, one that must run at most once -------------------------------

// #region toolbox
const StockInput = z.object({ sku: z.string() });
const OrderInput = z.object({ sku: z.string(), quantity: z.number().int().positive() });

export class Shop extends Toolbox {
  readonly #stock = new Map([
    ["tea", 12],
    ["mug", 3],
  ]);

  /** Reading stock is harmless to repeat: the default `safe_to_retry`. */
  @tool("check_stock", { input: StockInput, description: "How many units of a SKU are in stock" })
  async checkStock(args: z.infer<typeof StockInput>) {
    return { sku: args.sku, available: this.#stock.get(args.sku) ?? 0 };
  }

  /** Placing an order is a side effect: after a crash it is never silently repeated. */
  @tool("place_order", { idempotency: "at_most_once", input: OrderInput, description: "Place an order" })
  async placeOrder(args: z.infer<typeof OrderInput>) {
    const left = (this.#stock.get(args.sku) ?? 0) - args.quantity;
    if (left < 0) throw new Error(`only ${left + args.quantity} ${args.sku} left`);
    this.#stock.set(args.sku, left);
    return { sku: args.sku, quantity: args.quantity, remaining: left };
  }
}

// #endregion

// --- the agent ------------------------------------------------------------------------------

// #region agent
interface HelloInput {
  readonly sku: string;
  readonly quantity: number;
}

export class ShopAgent extends Agent<HelloInput, string> {
  static override id = "shop";
  readonly shop = new Shop();

  override async run(input: HelloInput): Promise<string> {
    const stock = await this.shop.checkStock({ sku: input.sku });
    if (stock.available < input.quantity) return `sorry, only ${stock.available} ${input.sku} in stock`;
    // Record the order id once: a rerun replays it instead of drawing a new one.
    const orderId = await step("order_id", () => `ord-${randomBytes(4).toString("hex")}`);
    try {
      const order = await this.shop.placeOrder({ sku: input.sku, quantity: input.quantity });
      return `${orderId}: ${order.quantity} × ${order.sku} ordered, ${order.remaining} left`;
    } catch (error) {
      // Policy may refuse any call; called from code, a refused tool throws ToolError "denied".
      if (ToolError.isInstance(error) && error.reason === "denied") {
        return `${orderId}: not ordered (${error.policyReason})`;
      }
      throw error;
    }
  }
}

/** The shop's policy: everything is allowed, except that mug orders are paused. */
export const SHOP_POLICY = `
default_action: allow
rules:
  - id: pause-mugs
    when:
      target: place_order
      arguments:
        sku: { equals: mug }
    then: { decision: deny, reason: mug orders are paused }
`;

// #endregion

// --- wiring: kernel, agent server, one execution --------------------------------------------

function table(rows: readonly Record<string, string>[]): string {
  const first = rows[0];
  if (first === undefined) return "(no steps)";
  const columns = Object.keys(first);
  const width = (c: string) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length));
  const line = (cells: (c: string) => string) =>
    columns
      .map((c) => cells(c).padEnd(width(c)))
      .join("  ")
      .trimEnd();
  return [
    line((c) => c),
    line((c) => "-".repeat(width(c))),
    ...rows.map((r) => line((c) => r[c] ?? "")),
  ].join("\n");
}

async function main(): Promise<void> {
  // #region wiring
  const kernel = await startDevKernel();
  const baseUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const secret = randomBytes(24).toString("hex");
  const agent = new ShopAgent({ secret, baseUrl, logger: { warn: console.warn, error: console.error } });
  const server = await agent.serve({ host: "127.0.0.1", port: 0 });
  kernel.registerAgent({ id: agent.id, webhookUrl: server.url, secret, policy: SHOP_POLICY });

  const client = new Client({ baseUrl });
  const created = await client.create(agent.id, { sku: "tea", quantity: 2 });
  const done = await client.waitForTerminal(created.id, { timeoutMs: 15_000 });
  // #endregion

  // The policy pauses mug orders: the agent reports the refusal instead of ordering.
  const refused = await client.waitForTerminal(
    (await client.create(agent.id, { sku: "mug", quantity: 1 })).id,
    {
      timeoutMs: 15_000,
    },
  );
  for (const execution of [done, refused]) {
    // The kernel lists steps by id; show them in the order they were recorded (first event).
    const events = await client.events(execution.id, { limit: 1000 });
    const order = (stepId: string) => events.find((e) => e.payload.step_id === stepId)?.eventSeq ?? 0;
    const steps = (await client.listSteps(execution.id)).sort((a, b) => order(a.stepId) - order(b.stepId));
    console.log(`execution ${execution.id}: ${execution.status}`);
    console.log(
      table(
        steps.map((s, i) => ({
          "#": String(i + 1),
          kind: s.kind,
          target: s.target,
          status: s.status,
          idempotency: s.idempotency,
          args: JSON.stringify(s.args),
          result: JSON.stringify(s.result ?? s.error ?? null),
        })),
      ),
    );
    console.log(`output: ${JSON.stringify(execution.output)}\n`);
  }
  await server.close();
  await kernel.close();
  for (const execution of [done, refused]) {
    if (execution.status !== "completed")
      throw new Error(`execution ended ${execution.status}: ${execution.failureReason ?? ""}`);
  }
}

// Runs when executed (`node main.js`), not when a test imports the toolbox and the agent.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
