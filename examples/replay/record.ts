/**
 * Writes recordings/order-tea.json: runs the assistant once on the dev kernel (in process, through
 * `TestEnvironment`) with the scripted model, and exports the execution as a recording — what
 * `rebuno exec export ID -o FILE` writes for an execution on any kernel.
 *
 *   pnpm --filter @rebuno/example-replay record
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Recording } from "@rebuno/protocol";
import { TestEnvironment } from "@rebuno/testing";
import { ShopAssistant } from "./agent.js";
import { scriptedModel } from "./scripted-model.js";

const RECORDING_FILE = fileURLToPath(new URL("../recordings/order-tea.json", import.meta.url));

/** Run the assistant on the dev kernel and return the execution's recording. */
export async function recordOrder(): Promise<Recording> {
  const env = await TestEnvironment.create({
    agents: [(options) => new ShopAssistant(options, scriptedModel)],
  });
  try {
    const run = await env.run("shop-assistant", { sku: "tea", quantity: 2 });
    if (run.execution.status !== "completed") throw new Error(`the run ${run.execution.status}`);
    return await env.client.exportRecording(run.execution.id);
  } finally {
    await env.teardown();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const recording = await recordOrder();
  writeFileSync(RECORDING_FILE, `${JSON.stringify(recording, null, 2)}\n`);
  console.log(`wrote ${recording.steps.length} steps to ${RECORDING_FILE}`);
}
