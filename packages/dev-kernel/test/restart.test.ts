// Kernel restart on a persistent store: the `rebuno-dev` CLI runs as a
// child process on SQLite, a loopback webhook agent records steps, the kernel is SIGKILLed while
// the agent is mid-step, and a new process on the same file and port must find every
// acknowledged write, reclaim the in-flight dispatch by lease expiry, and replay recorded results.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signRequest, verifyWebhookSignature } from "@rebuno/protocol";
import { freePort, type LineProcess, startRebunoDev } from "@rebuno/test-kit";
import { afterAll, beforeAll, expect, test } from "vitest";

const SECRET = "restart-secret";
// The kernel-wide lease (env knob of the CLI). Short so the reclaim happens within seconds; the
// agent finishes each burst of requests well inside it.
const LEASE_MS = 3000;

interface Webhook {
  readonly execution_id: string;
  readonly dispatch_id: string;
  readonly dispatch_attempt: number;
  readonly lease_timeout_seconds: number;
  /** Local arrival time. */
  readonly at: number;
}
interface Reply {
  readonly status: number;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON under test
  readonly body: any;
}

let dir: string;
let agentServer: Server;
let kernelPort: number;
let kernel: LineProcess | undefined;
const webhooks: Webhook[] = [];

/** `rebuno-dev` from source on the fixed port and SQLite file (a restart must find both again). */
async function startKernel(): Promise<LineProcess> {
  const started = await startRebunoDev({
    config: join(dir, "dev.yaml"),
    listen: `127.0.0.1:${kernelPort}`,
    store: `sqlite:${join(dir, "k.db")}`,
    env: { REBUNO_DISPATCH_LEASE_TIMEOUT: `${LEASE_MS / 1000}s` },
    timeoutMs: 15_000,
  });
  return started.process;
}

/** One HTTP request on a fresh connection (no keep-alive socket survives a killed kernel). */
function send(method: string, path: string, headers: Record<string, string>, body = ""): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: kernelPort, method, path, agent: false, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, text, body: text === "" ? undefined : JSON.parse(text) });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A signed agent request under the webhook's lease. */
function agent(method: string, path: string, w: Webhook, body = ""): Promise<Reply> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const lease = { dispatchId: w.dispatch_id, dispatchAttempt: w.dispatch_attempt };
  return send(
    method,
    path,
    {
      "content-type": "application/json",
      "rebuno-agent-id": "worker",
      "rebuno-timestamp": timestamp,
      "rebuno-dispatch-id": lease.dispatchId,
      "rebuno-dispatch-attempt": String(lease.dispatchAttempt),
      "rebuno-signature": signRequest({ secret: SECRET, method, target: path, timestamp, ...lease, body }),
    },
    body,
  );
}

const read = (path: string) => send("GET", path, {});

async function webhook(index: number, timeoutMs: number): Promise<Webhook> {
  const deadline = Date.now() + timeoutMs;
  while (webhooks.length <= index) {
    if (Date.now() > deadline) throw new Error(`webhook #${index + 1} did not arrive`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return webhooks[index]!;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rebuno-restart-"));
  agentServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      if (!verifyWebhookSignature(SECRET, text, req.headers["rebuno-signature"] as string | undefined)) {
        res.writeHead(401).end();
        return;
      }
      // Answer at once and work in the background, as real agents do (docs/protocol.md §7.2).
      res.writeHead(200).end();
      webhooks.push({ ...(JSON.parse(text) as Omit<Webhook, "at">), at: Date.now() });
    });
  });
  await new Promise<void>((resolve) => agentServer.listen(0, "127.0.0.1", resolve));
  const agentPort = (agentServer.address() as AddressInfo).port;
  writeFileSync(
    join(dir, "dev.yaml"),
    `agents:\n  - id: worker\n    webhook_url: http://127.0.0.1:${agentPort}/webhook\n    secret: ${SECRET}\n`,
  );
  kernelPort = await freePort();
});

afterAll(async () => {
  await kernel?.kill();
  await new Promise<void>((resolve) => agentServer.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

// Step args and results carry number literals JSON.parse would change (1.10, a 23-digit integer):
// the store must give back the very bytes it acknowledged.
const argsText = (i: number) => `{"i":${i},"amount":1.10,"ref":12345678901234567890123}`;
const resultText = (i: number) => `{"charged":${i}.50,"receipt":"r-${i}","exact":1.0}`;

test("SIGKILL mid-step, restart on the same SQLite file: nothing acknowledged is lost", async () => {
  const effects = new Map<number, number>();
  const effect = (i: number) => effects.set(i, (effects.get(i) ?? 0) + 1);
  const submit = (w: Webhook, i: number) =>
    agent(
      "POST",
      `/v0/executions/${w.execution_id}/steps`,
      w,
      `{"kind":"tool_call","target":"charge","args":${argsText(i)}}`,
    );

  kernel = await startKernel();
  const created = await send(
    "POST",
    "/v0/executions",
    { "content-type": "application/json" },
    '{"agent_id":"worker","input":{"n":3}}',
  );
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  const w1 = await webhook(0, 5000);
  expect(w1).toMatchObject({ execution_id: id, dispatch_attempt: 1, lease_timeout_seconds: LEASE_MS / 1000 });

  // Attempt 1: two steps fully recorded, the third proceeds and its effect runs.
  const stepIds: string[] = [];
  for (const i of [0, 1]) {
    const d = await submit(w1, i);
    expect(d.body).toMatchObject({ decision: "proceed" });
    effect(i);
    const c = await agent(
      "POST",
      `/v0/executions/${id}/steps/${d.body.step_id}/complete`,
      w1,
      `{"result":${resultText(i)}}`,
    );
    expect(c.status).toBe(200);
    stepIds.push(d.body.step_id);
  }
  // A submission renews the lease (docs/protocol.md §6.1 step 5), at some time after it was sent: the
  // lease cannot expire before LEASE_MS after this.
  const lastRenewal = Date.now();
  const third = await submit(w1, 2);
  expect(third.body).toMatchObject({ decision: "proceed" });
  effect(2);
  stepIds.push(third.body.step_id);

  const stepsBefore = await Promise.all(stepIds.map((s) => read(`/v0/executions/${id}/steps/${s}`)));
  const eventsBefore = await read(`/v0/executions/${id}/events?limit=1000`);
  expect(stepsBefore[0]!.text).toContain(`"args":${argsText(0)}`);
  expect(stepsBefore[0]!.text).toContain(`"result":${resultText(0)}`);
  expect(stepsBefore[2]!.body.status).toBe("executing");

  // The agent is mid-step (effect done, completion not sent) when the kernel dies.
  await kernel.kill();
  kernel = await startKernel();

  // Nothing acknowledged was lost: recorded steps are byte-identical, the log is intact.
  for (const [i, before] of stepsBefore.entries()) {
    const after = await read(`/v0/executions/${id}/steps/${stepIds[i]}`);
    expect(after.status).toBe(200);
    expect(after.text).toBe(before.text);
  }
  const eventsAfterRestart = await read(`/v0/executions/${id}/events?limit=1000`);
  expect(eventsAfterRestart.body.slice(0, eventsBefore.body.length)).toEqual(eventsBefore.body);

  // The in-flight dispatch comes back only once its lease expired: same dispatch, next attempt.
  const w2 = await webhook(1, LEASE_MS + 10_000);
  expect(w2).toMatchObject({ execution_id: id, dispatch_id: w1.dispatch_id, dispatch_attempt: 2 });
  expect(w2.at - lastRenewal).toBeGreaterThanOrEqual(LEASE_MS - 50);
  expect(webhooks).toHaveLength(2);
  // The old attempt is fenced off.
  const stale = await submit(w1, 3);
  expect(stale.status).toBe(409);
  expect(stale.body.code).toBe("lease_superseded");

  // Attempt 2 re-runs the handler: recorded steps replay byte-exact without running the effect;
  // the step left executing (safe_to_retry) proceeds again.
  for (const i of [0, 1]) {
    const r = await submit(w2, i);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ decision: "replay", step_id: stepIds[i] });
    expect(r.text).toContain(`"result":${resultText(i)}`);
  }
  const retried = await submit(w2, 2);
  expect(retried.body).toMatchObject({ decision: "proceed", step_id: stepIds[2] });
  effect(2);
  const done = await agent(
    "POST",
    `/v0/executions/${id}/steps/${stepIds[2]}/complete`,
    w2,
    `{"result":${resultText(2)}}`,
  );
  expect(done.body).toEqual({ decision: "recorded" });
  const completed = await agent("POST", `/v0/executions/${id}/complete`, w2, '{"output":{"charged":3}}');
  expect(completed.status).toBe(204);
  expect(Object.fromEntries(effects)).toEqual({ 0: 1, 1: 1, 2: 2 });

  const execution = await read(`/v0/executions/${id}`);
  expect(execution.body).toMatchObject({ status: "completed", output: { charged: 3 } });
  const steps = await read(`/v0/executions/${id}/steps`);
  expect(steps.body.map((s: { step_id: string; status: string }) => [s.step_id, s.status])).toEqual(
    [...stepIds].sort().map((s) => [s, "succeeded"]),
  );
  // Events: gap-free 1..N, the pre-crash log as a prefix, the reclaim visible as a second ack.
  const events = (await read(`/v0/executions/${id}/events?limit=1000`)).body as {
    event_seq: number;
    type: string;
    payload: Record<string, unknown>;
  }[];
  expect(events.map((e) => e.event_seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.slice(0, eventsBefore.body.length)).toEqual(eventsBefore.body);
  expect(events.filter((e) => e.type === "dispatch.acked").map((e) => e.payload.attempt)).toEqual([1, 2]);
  expect(events.at(-1)?.type).toBe("execution.completed");
  expect(events.filter((e) => e.type === "step.succeeded")).toHaveLength(3);
}, 30_000);
