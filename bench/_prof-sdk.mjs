// temporary profiling driver (not committed)
import { fileURLToPath } from "node:url";
import { serveDevKernel, startDevKernelProcess, startWebhookReceiver, signedPost } from "./lib/kernel-harness.mjs";
import { SECRET } from "./lib/transport-harness.mjs";
const SCRIPT = fileURLToPath(import.meta.url);
if (process.argv.includes("--serve-kernel")) {
  const i = process.argv.indexOf("--serve-kernel");
  await serveDevKernel(process.argv[i + 1], process.argv[i + 2]);
} else {
  const { register } = await import("tsx/esm/api"); register();
  const sdk = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const { BenchTools } = await import("./sdk-toolbox.ts");
  const box = new BenchTools();
  const receiver = await startWebhookReceiver();
  const kernel = await startDevKernelProcess(SCRIPT, "memory", receiver.url);
  const client = new Client({ baseUrl: kernel.url });
  const N = Number(process.argv[2] ?? 20000);
  const mode = process.argv[3] ?? "sdk";
  if (mode === "sdk") {
    let res;
    const done = new Promise((r) => (res = r));
    const agent = new sdk.Agent("p", async () => {
      for (let i = 0; i < 500; i++) await box.noop({ n: i });
      const c0 = process.cpuUsage(); const t0 = performance.now();
      for (let i = 0; i < N; i++) await box.noop({ n: i + 1000 });
      const c = process.cpuUsage(c0);
      res({ cpuPerStep: (c.user + c.system) / N, usPerStep: (performance.now() - t0) * 1000 / N });
      return 1;
    }, { secret: SECRET, baseUrl: kernel.url, logger: { warn() {} } });
    const h = await agent.serve({ host: "127.0.0.1", port: 0 });
    await client.registerAgent({ id: "p", webhookUrl: h.url, secret: SECRET });
    await client.create("p", {});
    console.log(mode, await done);
    await agent.join(); await h.close();
  } else {
    const { Pool } = await import("undici");
    const pool = new Pool(kernel.url, { connections: 64, pipelining: 1 });
    const ex = await client.create("bench-agent", null);
    const lease = await receiver.lease(ex.id);
    const pair = async (n) => {
      const t = `/v0/executions/${ex.id}/steps`;
      const d = await signedPost(pool, t, lease, `{"kind":"tool_call","target":"noop","args":{"n":${n}},"idempotency":"safe_to_retry","resources":[]}`);
      await signedPost(pool, `${t}/${d.step_id}/complete`, lease, `{"result":{"ok":true,"n":${n}}}`);
    };
    for (let i = 0; i < 500; i++) await pair(i);
    const c0 = process.cpuUsage(); const t0 = performance.now();
    for (let i = 0; i < N; i++) await pair(i + 1000);
    const c = process.cpuUsage(c0);
    console.log(mode, { cpuPerStep: (c.user + c.system) / N, usPerStep: (performance.now() - t0) * 1000 / N });
    await pool.close();
  }
  await kernel.stop(); await receiver.close();
}
