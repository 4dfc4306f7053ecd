/**
 * The agents of the tour that run inside the tour's own process: a shop (stage 1), a support desk
 * whose policy denies one tool and holds another for approval (stages 2 and 3), and an editor that
 * asks a researcher subagent twice in one session (stage 5). Every tool body counts its runs, so
 * the tour can show which calls ran and which were replayed.
 */
import { randomBytes } from "node:crypto";
import {
  Agent,
  type AgentOptions,
  execution,
  previous,
  Result,
  step,
  subagent,
  Toolbox,
  tool,
  toVercelTools,
} from "@rebuno/sdk";
import { z } from "zod";

/** How many times each tool or step body really ran in this process. */
export const bodyRuns = new Map<string, number>();

function ran(name: string): void {
  bodyRuns.set(name, (bodyRuns.get(name) ?? 0) + 1);
}

// --- stage 1: a decorated toolbox and a class agent -------------------------------------------

// #region shop
const OrderInput = z.object({ sku: z.string(), quantity: z.number().int().positive() });

export class Shop extends Toolbox {
  readonly #stock = new Map([
    ["tea", 12],
    ["mug", 3],
  ]);

  @tool("check_stock", {
    description: "How many units of a SKU are in stock",
    input: z.object({ sku: z.string() }),
  })
  async checkStock(args: { sku: string }) {
    ran("check_stock");
    return { sku: args.sku, available: this.#stock.get(args.sku) ?? 0 };
  }

  @tool("place_order", { idempotency: "at_most_once", input: OrderInput, description: "Place an order" })
  async placeOrder(args: z.infer<typeof OrderInput>) {
    ran("place_order");
    const left = (this.#stock.get(args.sku) ?? 0) - args.quantity;
    if (left < 0) throw new Error(`only ${left + args.quantity} ${args.sku} left`);
    this.#stock.set(args.sku, left);
    return { sku: args.sku, quantity: args.quantity, remaining: left };
  }
}

export class ShopAgent extends Agent<{ sku: string; quantity: number }, string> {
  static override id = "shop";
  readonly shop = new Shop();

  override async run(input: { sku: string; quantity: number }): Promise<string> {
    const stock = await this.shop.checkStock({ sku: input.sku });
    if (stock.available < input.quantity) return `sorry, only ${stock.available} ${input.sku} left`;
    const orderId = await step("order_id", () => `ord-${randomBytes(4).toString("hex")}`);
    const order = await this.shop.placeOrder(input);
    return `${orderId}: ${order.quantity} × ${order.sku} ordered, ${order.remaining} left`;
  }
}
// #endregion

// --- stages 2 and 3: a denied tool, a tool held for approval ----------------------------------

// #region support-policy
/** The support desk's policy bundle: one tool is never allowed, refunds wait for a person. */
export const SUPPORT_POLICY = `default_action: allow
rules:
  - id: never-delete-accounts
    when: { target: delete_account }
    then:
      decision: deny
      reason: accounts are closed by the support team, not by the assistant
  - id: refunds-need-a-person
    when: { target: refund }
    then:
      decision: require_approval
      approval_config: { message: "refund requested by the assistant" }
`;
// #endregion

export class Support extends Toolbox {
  @tool("lookup_order", { description: "Look up an order", input: z.object({ order: z.string() }) })
  async lookupOrder(args: { order: string }) {
    ran("lookup_order");
    return { order: args.order, status: "delivered", paidCents: 2599 };
  }

  @tool("refund", {
    description: "Refund an order",
    idempotency: "at_most_once",
    input: z.object({ order: z.string(), cents: z.number().int().positive() }),
  })
  async refund(args: { order: string; cents: number }) {
    ran("refund");
    return { refunded: args.cents, order: args.order };
  }

  @tool("delete_account", {
    description: "Close a customer account",
    input: z.object({ customer: z.string() }),
  })
  async deleteAccount(args: { customer: string }) {
    ran("delete_account");
    return { deleted: args.customer };
  }
}

type SupportInput =
  | { readonly ask: "close_account"; readonly customer: string }
  | { readonly ask: "refund"; readonly order: string };

// #region support-agent
export class SupportAgent extends Agent<SupportInput, unknown> {
  static override id = "support";
  readonly support = new Support();

  override async run(input: SupportInput): Promise<unknown> {
    // The tools exactly as the Vercel AI SDK calls them: what `execute` returns is what the model reads.
    const tools = toVercelTools(this.support);
    if (input.ask === "close_account") {
      const toolResult = await tools.delete_account!.execute(
        { customer: input.customer },
        { toolCallId: "call_1" },
      );
      return { modelReads: toolResult };
    }
    const order = await this.support.lookupOrder({ order: input.order });
    const refund = await this.support.refund({ order: order.order, cents: order.paidCents });
    return { order, refund };
  }
}
// #endregion

// --- stage 5: a subagent in a session, and a resumed run that replays ----------------------------

// #region researcher
/** The child agent: each call in the same session continues from the previous one's state. */
export const researcher = (options: AgentOptions) =>
  new Agent<{ topic: string }, unknown>(
    "researcher",
    async (input) => {
      ran("researcher");
      // Slow enough that the parent suspends instead of holding a worker while it waits.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const prior = await previous<{ notes: string[] }>();
      const notes = [...(prior?.notes ?? []), input.topic];
      return new Result({ output: { topic: input.topic, notes }, state: { notes } });
    },
    options,
  );
// #endregion

export class Desk extends Toolbox {
  @tool("research", {
    description: "Ask the researcher",
    input: z.object({ topic: z.string(), session: z.string() }),
  })
  async research(args: { topic: string; session: string }) {
    ran("research");
    return subagent("researcher", { topic: args.topic }, { session: args.session });
  }
}

// #region editor
export class EditorAgent extends Agent<{ title: string }, unknown> {
  static override id = "editor";
  readonly desk = new Desk();

  override async run(input: { title: string }): Promise<unknown> {
    ran("editor.run");
    const outline = await step("outline", () => {
      ran("outline");
      return [`why ${input.title}`, `how ${input.title}`];
    });
    // One session per parent: the second question continues from the first one's notes.
    const session = `researcher:${execution().id}`;
    const first = await this.desk.research({ topic: outline[0]!, session });
    const second = await this.desk.research({ topic: outline[1]!, session });
    return { outline, first, second };
  }
}
// #endregion
