/**
 * The tour's fulfilment agent, run as a child process so the tour can SIGKILL it in the middle of
 * a tool. It prints one JSON object per line on stdout: `{"listening":url}` once serving,
 * `{"body":name,"pid":n}` when a tool body starts, `{"replay":…}` for each replayed step and
 * `{"reconcile":message}` when it checks the world after an indeterminate call.
 *
 * With `TOUR_HANG=1` the bodies never finish (the tour kills this process while they run); the
 * charge is written to the ledger file first, so it really happened before the crash.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { Agent, Toolbox, ToolError, tool } from "@rebuno/sdk";
import { z } from "zod";
import { replayObservingFetch } from "./observe.js";
import { traceIfConfigured } from "./tracing.js";

const stopTracing = await traceIfConfigured("rebuno-tour-fulfilment");
// The tour ends this process with SIGTERM: export what is batched first. (A SIGKILL loses it.)
process.once("SIGTERM", () => {
  void stopTracing().finally(() => process.exit(0));
});

const hang = process.env.TOUR_HANG === "1";
const ledger = process.env.TOUR_LEDGER ?? "";
const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function body(name: string): Promise<void> {
  say({ body: name, pid: process.pid });
  if (hang) await new Promise<never>(() => {});
}

// #region fulfilment
class Fulfilment extends Toolbox {
  /** Printing a label twice is harmless: the default `safe_to_retry`. */
  @tool("print_label", { input: z.object({ order: z.string() }) }) async printLabel(args: { order: string }) {
    await body("print_label");
    return { order: args.order, label: `LBL-${args.order}`, printedBy: process.pid };
  }

  /** Charging twice is not: `at_most_once`. The ledger write is the side effect. */
  @tool("charge_card", {
    idempotency: "at_most_once",
    input: z.object({ order: z.string(), cents: z.number().int() }),
  })
  async chargeCard(args: { order: string; cents: number }) {
    appendFileSync(
      ledger,
      `${JSON.stringify({ order: args.order, cents: args.cents, charge: `ch-${args.order}` })}\n`,
    );
    await body("charge_card");
    return { charge: `ch-${args.order}`, cents: args.cents };
  }

  /** Reading the ledger is how the agent finds out whether an unknown charge happened. */
  @tool("find_charge", { input: z.object({ order: z.string() }) }) async findCharge(args: { order: string }) {
    await body("find_charge");
    const lines = existsSync(ledger) ? readFileSync(ledger, "utf8").split("\n").filter(Boolean) : [];
    const found = lines
      .map((l) => JSON.parse(l) as { order: string; charge: string })
      .find((c) => c.order === args.order);
    return found ?? null;
  }
}

const fulfilment = new Fulfilment();

async function fulfil(input: { order: string; cents: number }) {
  // Both effects start together; the tour kills the process while both bodies run.
  const [label, charge] = await Promise.allSettled([
    fulfilment.printLabel({ order: input.order }),
    fulfilment.chargeCard({ order: input.order, cents: input.cents }),
  ]);
  if (label.status === "rejected") throw label.reason;
  if (charge.status === "fulfilled") return { label: label.value, payment: charge.value };
  if (!ToolError.isInstance(charge.reason)) throw charge.reason;
  // Outcome unknown: the charge may or may not have happened. Check the world before acting.
  say({ reconcile: charge.reason.message });
  const found = await fulfilment.findCharge({ order: input.order });
  if (found !== null)
    return {
      label: label.value,
      payment: { ...found, reconciled: "found in the ledger; not charged again" },
    };
  return {
    label: label.value,
    payment: await fulfilment.chargeCard({ order: `${input.order}-retry`, cents: input.cents }),
  };
}
// #endregion

const agent = new Agent("fulfilment", fulfil, {
  logger: {
    warn: () => {},
    error: (...args: unknown[]) => process.stderr.write(`${args.map(String).join(" ")}\n`),
  },
  fetch: replayObservingFetch((seen) => say({ replay: seen })),
});
const server = await agent.serve({ host: "127.0.0.1", port: 0 });
say({ listening: server.url, pid: process.pid });
