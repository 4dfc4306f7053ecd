// The one workload of B14, written idiomatically for each system: a workflow of STEPS sequential
// durable no-op steps, started by a caller that waits for its result. Each `setup` runs in the
// worker process (worker.mjs) and returns `run()` (one workflow, resolved when the caller holds
// the result) and `close()`.
export const STEPS = 20;

/**
 * Ours: an SDK agent whose handler runs STEPS `step()` calls (the SDK's durable local step: each
 * is recorded by the kernel before its value is used, and replayed on a rerun, like `ctx.run` and
 * `DBOS.runStep`); the caller is `@rebuno/client` (create, then `waitForTerminal` on the stream).
 */
export async function setupOurs({ kernelUrl }) {
  const sdk = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const id = "bench-b14";
  const secret = "bench-b14-secret-0123456789abcdef";
  const handler = async () => {
    let sum = 0;
    for (let i = 0; i < STEPS; i++) sum += await sdk.step(`s${i}`, () => i);
    return { sum };
  };
  const logger = { warn: () => {}, error: (m, f) => console.error(`rebuno: ${m}`, f ?? "") };
  const agent = new sdk.Agent(id, handler, { secret, baseUrl: kernelUrl, logger });
  const served = await agent.serve({ host: "127.0.0.1", port: 0 });
  const client = new Client({ baseUrl: kernelUrl, env: {} });
  await client.registerAgent({ id, webhookUrl: served.url, secret });
  return {
    run: async () => {
      const { id: executionId } = await client.create(id, null);
      const done = await client.waitForTerminal(executionId, { timeoutMs: 300_000 });
      if (done.status !== "completed") throw new Error(`execution ${executionId} ended ${done.status}`);
    },
    close: () => served.close(),
  };
}

/**
 * Restate: a service handler with STEPS `ctx.run` calls, served by the SDK's HTTP/2 endpoint and
 * registered with the server; the caller is a plain HTTP request to the ingress, which answers
 * with the handler's result (Restate's request-response call).
 */
export async function setupRestate({ ingressUrl, adminUrl }) {
  // The SDK (1.14 and later) calls Promise.withResolvers, which Node 20 (this repository's floor)
  // lacks; the spec's definition, so the newest SDK runs here rather than an older, slower one.
  if (typeof Promise.withResolvers !== "function") {
    Promise.withResolvers = function withResolvers() {
      let resolve;
      let reject;
      const promise = new this((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    };
  }
  // Errors only, like our agent's logger and DBOS's logLevel: no console line per invocation.
  process.env.RESTATE_LOGGING ??= "ERROR";
  const restate = await import("@restatedev/restate-sdk");
  const service = restate.service({
    name: "B14",
    handlers: {
      run: async (ctx) => {
        let sum = 0;
        for (let i = 0; i < STEPS; i++) sum += await ctx.run(`s${i}`, async () => i);
        return { sum };
      },
    },
  });
  const port = await restate.serve({ services: [service], port: 0 });
  const reg = await fetch(`${adminUrl}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: `http://127.0.0.1:${port}`, force: true }),
  });
  if (!reg.ok) throw new Error(`restate: registering the deployment: ${reg.status} ${await reg.text()}`);
  await reg.text();
  return {
    run: async () => {
      const res = await fetch(`${ingressUrl}/B14/run`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "null",
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`restate: ${res.status} ${text}`);
    },
    close: async () => {},
  };
}

/**
 * DBOS: a registered workflow with STEPS `DBOS.runStep` calls on the PostgreSQL system database;
 * the caller invokes the workflow function in-process (DBOS is a library: that is its call).
 */
export async function setupDbos({ databaseUrl }) {
  const { DBOS } = await import("@dbos-inc/dbos-sdk");
  DBOS.setConfig({ name: "bench-b14", systemDatabaseUrl: databaseUrl, logLevel: "error" });
  const workflow = DBOS.registerWorkflow(
    async () => {
      let sum = 0;
      for (let i = 0; i < STEPS; i++) sum += await DBOS.runStep(async () => i, { name: `s${i}` });
      return { sum };
    },
    { name: "b14" },
  );
  await DBOS.launch();
  return {
    run: async () => {
      const result = await workflow();
      if (result.sum !== (STEPS * (STEPS - 1)) / 2)
        throw new Error(`dbos: wrong result ${JSON.stringify(result)}`);
    },
    close: () => DBOS.shutdown(),
  };
}

export const SETUPS = { ours: setupOurs, restate: setupRestate, dbos: setupDbos };
