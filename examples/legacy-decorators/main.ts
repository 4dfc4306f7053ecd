/**
 * @tool, @agent and an injectable Toolbox compiled with TypeScript's `experimentalDecorators` and
 * `emitDecoratorMetadata`, run end to end on the embedded dev kernel:
 * 1. the class-definition check that `emitDecoratorMetadata` enables is shown on a mismatched tool;
 * 2. a dev kernel and the agent start on loopback; one execution reserves tea; its steps print.
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import { Client } from "@rebuno/client";
import { startDevKernel } from "@rebuno/dev-kernel";
import { defineMismatchedToolbox, LegacyShop } from "./shop.js";

async function main(): Promise<void> {
  console.log(`metadata check: ${defineMismatchedToolbox()}`);
  const kernel = await startDevKernel();
  const baseUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const secret = randomBytes(24).toString("hex");
  const shop = new LegacyShop({ secret, baseUrl, logger: { warn: console.warn, error: console.error } });
  const server = await shop.serve({ host: "127.0.0.1", port: 0 });
  kernel.registerAgent({ id: shop.id, webhookUrl: server.url, secret });
  try {
    const client = new Client({ baseUrl });
    const created = await client.create(shop.id, { sku: "tea", quantity: 2 });
    const done = await client.waitForTerminal(created.id, { timeoutMs: 15_000 });
    const steps = await client.listSteps(created.id);
    console.log(`agent ${shop.id}: execution ${done.status}`);
    for (const s of steps.sort((a, b) => a.target.localeCompare(b.target))) {
      console.log(`step ${s.target} ${s.status} ${JSON.stringify(s.args)} -> ${JSON.stringify(s.result)}`);
    }
    console.log(`output: ${JSON.stringify(done.output)}`);
    if (done.status !== "completed")
      throw new Error(`execution ended ${done.status}: ${done.failureReason ?? ""}`);
  } finally {
    await server.close();
    await kernel.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
