/**
 * The runtime-matrix agent (verify/runtimes/run.mjs): the same agent on Node, Deno and Bun, served by each
 * runtime's own server around `agent.fetch` (Node: `agent.serve`). One execution makes `calls`
 * no-op tool calls (each a signed submit + complete through the transport) and reports the mean
 * and median time per call, measured inside the agent: B1's "sdk→kernel no-op tool call".
 *
 *   REBUNO_URL=… node --import tsx verify/runtimes/agent.ts | deno run -A verify/runtimes/agent.ts | bun verify/runtimes/agent.ts
 */
import { Client } from "@rebuno/client";
import { Agent, defineTool } from "@rebuno/sdk";

interface RuntimeGlobals {
  readonly Deno?: {
    readonly version: { readonly deno: string };
    serve(
      options: { hostname: string; port: number; onListen(): void },
      handler: (request: Request) => Promise<Response>,
    ): { readonly addr: { readonly port: number }; shutdown(): Promise<void> };
  };
  readonly Bun?: {
    readonly version: string;
    serve(options: { hostname: string; port: number; fetch: (request: Request) => Promise<Response> }): {
      readonly port: number;
      stop(force: boolean): Promise<void>;
    };
  };
  readonly process?: {
    readonly versions: { readonly node: string };
    readonly env: Record<string, string | undefined>;
  };
}
const g = globalThis as RuntimeGlobals;
const runtime = g.Deno
  ? `deno/${g.Deno.version.deno}`
  : g.Bun
    ? `bun/${g.Bun.version}`
    : `node/${g.process?.versions.node}`;
const env = (name: string): string | undefined =>
  g.Deno
    ? (g.Deno as unknown as { env: { get(n: string): string | undefined } }).env.get(name)
    : g.process?.env[name];

const noop = defineTool({
  name: "noop",
  description: "Does nothing",
  execute: (args: { i: number }) => args.i,
});

interface Input {
  readonly calls: number;
}
interface Output {
  readonly runtime: string;
  readonly engine: string;
  readonly calls: number;
  readonly meanUs: number;
  readonly p50Us: number;
}

class MatrixAgent extends Agent<Input, Output> {
  static override id = `matrix-${runtime.split("/")[0]}`;
  override async run(input: Input): Promise<Output> {
    const times: number[] = [];
    for (let i = 0; i < input.calls; i++) {
      const start = performance.now();
      if ((await noop({ i })) !== i) throw new Error("tool result mismatch");
      times.push(performance.now() - start);
    }
    // The first calls warm up connections and JIT; B1 is about the steady state.
    const steady = times.slice(Math.min(20, Math.floor(times.length / 4))).sort((a, b) => a - b);
    const mean = steady.reduce((s, t) => s + t, 0) / steady.length;
    return {
      runtime,
      engine: g.Deno || g.Bun ? "fetch" : "undici",
      calls: input.calls,
      meanUs: Math.round(mean * 1000),
      p50Us: Math.round(steady[Math.floor(steady.length / 2)]! * 1000),
    };
  }
}

const baseUrl = env("REBUNO_URL") ?? "http://127.0.0.1:8080";
const calls = Number(env("REBUNO_MATRIX_CALLS") ?? "200");
const secret = crypto.randomUUID();
const agent = new MatrixAgent({ secret, baseUrl });

async function serve(): Promise<{ url: string; close(): Promise<void> }> {
  const path = agent.webhookPath;
  if (g.Deno) {
    const s = g.Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, agent.fetch);
    return { url: `http://127.0.0.1:${s.addr.port}${path}`, close: () => s.shutdown() };
  }
  if (g.Bun) {
    const s = g.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: agent.fetch });
    return { url: `http://127.0.0.1:${s.port}${path}`, close: () => s.stop(true) };
  }
  const s = await agent.serve({ host: "127.0.0.1", port: 0 });
  return { url: s.url, close: () => s.close() };
}

const server = await serve();
const client = new Client({ baseUrl });
try {
  await client.registerAgent({ id: MatrixAgent.id, webhookUrl: server.url, secret });
  const execution = await client.create(MatrixAgent.id, { calls });
  const done = await client.waitForTerminal(execution.id, { timeoutMs: 120_000 });
  const steps = await client.listSteps(execution.id);
  console.log(JSON.stringify({ status: done.status, output: done.output, steps: steps.length }));
} finally {
  await client.close();
  await server.close();
}
