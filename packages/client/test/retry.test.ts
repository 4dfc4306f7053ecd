import { createServer } from "node:net";
import { InternalError, NetworkError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeKernel, startFakeKernel, wireExecution } from "./fake-kernel.js";
import { clientFor, quietLogger } from "./helpers.js";

const ID = "0192f1a0-0000-7000-8000-000000000000";
const UNAVAILABLE = { status: 503, json: { code: "unavailable", message: "kernel restarting" } } as const;

let kernel: FakeKernel;
beforeEach(async () => {
  kernel = await startFakeKernel();
});
afterEach(async () => {
  await kernel.close();
});

/** A loopback port with nothing listening (connection refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("retries", () => {
  it("retries a GET after 503 and reports the retry to the logger", async () => {
    const logger = quietLogger();
    const client = clientFor(kernel, { logger });
    kernel.reply(UNAVAILABLE, UNAVAILABLE, { status: 200, json: wireExecution() });
    expect((await client.get(ID)).id).toBe(ID);
    expect(kernel.requests).toHaveLength(3);
    expect(logger.warn).toHaveBeenCalledTimes(2);
  });

  it("gives up after the configured attempts with the last error", async () => {
    const client = clientFor(kernel, { retry: { attempts: 2, baseMs: 1, maxMs: 2 } });
    kernel.reply(UNAVAILABLE, UNAVAILABLE, { status: 200, json: wireExecution() });
    await expect(client.get(ID)).rejects.toMatchObject({ status: 503, code: "unavailable" });
    expect(kernel.requests).toHaveLength(2);
  });

  it("never retries 500 or 4xx, even for a GET", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 500, json: { code: "internal_error", message: "boom" } });
    await expect(client.get(ID)).rejects.toBeInstanceOf(InternalError);
    expect(kernel.requests).toHaveLength(1);
  });

  it("does not retry a create without an idempotency key after 503", async () => {
    const client = clientFor(kernel);
    kernel.reply(UNAVAILABLE, { status: 201, json: wireExecution() });
    await expect(client.create("researcher", {})).rejects.toMatchObject({ status: 503 });
    expect(kernel.requests).toHaveLength(1);
  });

  it("retries a create with an idempotency key, re-sending the same body", async () => {
    const client = clientFor(kernel);
    kernel.reply(UNAVAILABLE, { status: 201, json: wireExecution() });
    await client.create("researcher", { q: 1 }, { idempotencyKey: "req-1" });
    expect(kernel.requests).toHaveLength(2);
    expect(kernel.requests[1]!.bodyText).toBe(kernel.requests[0]!.bodyText);
    expect(kernel.requests[1]!.body).toMatchObject({ idempotency_key: "req-1" });
  });

  it("does not retry cancel, grant, deny, fork, delete agent or create API key after 503", async () => {
    const client = clientFor(kernel);
    const calls = [
      () => client.cancel(ID),
      () => client.grantApproval("ap", { decidedBy: "alice" }),
      () => client.denyApproval("ap", { decidedBy: "alice" }),
      () => client.fork(ID, { atSeq: 3 }),
      () => client.deleteAgent("researcher"),
      () => client.createApiKey({ name: "k", scopes: [] }),
    ];
    for (const call of calls) {
      kernel.requests.length = 0;
      // A retry would reach the empty queue and be counted below.
      kernel.reply(UNAVAILABLE);
      await expect(call()).rejects.toMatchObject({ status: 503 });
      expect(kernel.requests).toHaveLength(1);
    }
  });

  it("retries idempotent writes: register agent, set policy, test policy, rotate and revoke keys", async () => {
    const client = clientFor(kernel);
    const agent = { id: "a", webhook_url: "http://h/w", registered_at: "2026-07-07T11:00:00Z" };
    const key = { id: "k", name: "n", scopes: [], created_at: "2026-07-07T11:00:00Z", token: "t" };
    const calls: [() => Promise<unknown>, object][] = [
      [
        () => client.registerAgent({ id: "a", webhookUrl: "http://h/w", secret: "s" }),
        { status: 201, json: agent },
      ],
      [() => client.setPolicy("a", "rules: []\n"), { status: 204 }],
      [() => client.testPolicy("a", { bundle: "rules: []\n" }), { status: 200, json: { mismatches: 0 } }],
      [() => client.rotateApiKey("k"), { status: 200, json: key }],
      [() => client.revokeApiKey("k"), { status: 204 }],
    ];
    for (const [call, ok] of calls) {
      kernel.requests.length = 0;
      kernel.reply(UNAVAILABLE, ok as never);
      await call();
      expect(kernel.requests).toHaveLength(2);
    }
  });

  it("retries even a create without a key when the connection was refused (never sent)", async () => {
    const port = await closedPort();
    const logger = quietLogger();
    const client = clientFor(kernel, {
      baseUrl: `http://127.0.0.1:${port}`,
      logger,
      retry: { attempts: 3, baseMs: 1 },
    });
    const err = await client.create("researcher", {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    // Two retries were attempted: the refusal proves nothing reached a kernel.
    expect(logger.warn).toHaveBeenCalledTimes(2);
  });
});
