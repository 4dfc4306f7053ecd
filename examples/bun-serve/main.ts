/**
 * A Rebuno agent under `Bun.serve`: the agent's webhook handler `agent.fetch` is a Web
 * `(Request) => Promise<Response>`, so it is the whole server. On Bun the transport sends through
 * `fetch` (no undici) and signs every kernel call with WebCrypto.
 *
 *   REBUNO_URL=http://127.0.0.1:8080 bun main.ts
 *
 * Registers the agent with the kernel, runs one execution (one recorded tool call and one local
 * step), prints the finished execution as JSON and exits.
 */
import { Client } from "@rebuno/client";
import { Agent, defineTool, step } from "@rebuno/sdk";

// #region agent
const greet = defineTool({
  name: "greet",
  description: "Greets someone by name",
  execute: (args: { name: string }) => ({ greeting: `hello, ${args.name}` }),
});

class Greeter extends Agent<{ name: string }, string> {
  static override id = "bun-greeter";

  override async run(input: { name: string }): Promise<string> {
    const { greeting } = await greet({ name: input.name });
    const runtime = await step("runtime", () => `bun/${Bun.version}`);
    return `${greeting} (${runtime})`;
  }
}

const baseUrl = process.env.REBUNO_URL ?? "http://127.0.0.1:8080";
const secret = crypto.randomUUID();
const agent = new Greeter({ secret, baseUrl });
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: agent.fetch });
// #endregion agent

const client = new Client({ baseUrl, apiKey: process.env.REBUNO_API_KEY });
try {
  const webhookUrl = `http://127.0.0.1:${server.port}${agent.webhookPath}`;
  await client.registerAgent({ id: Greeter.id, webhookUrl, secret });
  const execution = await client.create(Greeter.id, { name: "Bun" });
  const done = await client.waitForTerminal(execution.id, { timeoutMs: 60_000 });
  const steps = await client.listSteps(execution.id);
  console.log(JSON.stringify({ status: done.status, output: done.output, steps: steps.map((s) => s.kind) }));
  if (done.status !== "completed") process.exitCode = 1;
} finally {
  await client.close();
  await server.stop(true);
}
