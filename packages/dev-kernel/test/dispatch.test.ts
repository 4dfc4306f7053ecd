// Dispatch (docs/protocol.md §7): webhook delivery over a real socket, retries with backoff, exhaustion,
// lease reclaim, and live-vs-current lease fencing per route.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { signRequest, verifyWebhookSignature } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { backoffMs } from "../src/engine/dispatcher.js";
import { startDevKernel } from "../src/kernel.js";
import { Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

describe.each(stores)("dispatch ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  test("webhooks reach a real agent server over loopback, signed with sha256=", async () => {
    const received: { headers: Record<string, unknown>; body: string; valid: boolean }[] = [];
    let arrived: () => void = () => {};
    const got = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const agentServer: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const valid = verifyWebhookSignature("sock-secret", body, req.headers["rebuno-signature"] as string);
        received.push({ headers: req.headers, body, valid });
        res.writeHead(valid ? 200 : 401).end();
        arrived();
      });
    });
    await new Promise<void>((r) => agentServer.listen(0, "127.0.0.1", r));
    const port = (agentServer.address() as AddressInfo).port;
    const kernel = await startDevKernel({
      store: store.create(),
      agents: [
        {
          id: "sock",
          webhookUrl: `http://127.0.0.1:${port}/webhook`,
          secret: "sock-secret",
          leaseTimeoutSeconds: 45,
        },
      ],
    });
    try {
      const base = await kernel.listen();
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const created = await fetch(`${base}/v0/executions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ agent_id: "sock", input: "hi" }),
      });
      expect(created.status).toBe(201);
      const e = (await created.json()) as { id: string };
      await got;
      expect(received).toHaveLength(1);
      const first = received[0]!;
      expect(first.valid).toBe(true);
      expect(first.headers["content-type"]).toBe("application/json");
      expect(first.headers["rebuno-execution-id"]).toBe(e.id);
      const body = JSON.parse(first.body);
      expect(body).toEqual({
        execution_id: e.id,
        dispatch_id: expect.any(String),
        dispatch_attempt: 1,
        lease_timeout_seconds: 45,
      });
      // The agent calls back over the socket with a v1 signature.
      const target = `/v0/executions/${e.id}/steps`;
      const payload = JSON.stringify({ kind: "local", target: "now", args: {} });
      const ts = String(Math.floor(Date.now() / 1000));
      const res = await fetch(base + target, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "rebuno-agent-id": "sock",
          "rebuno-timestamp": ts,
          "rebuno-dispatch-id": body.dispatch_id,
          "rebuno-dispatch-attempt": "1",
          "rebuno-signature": signRequest({
            secret: "sock-secret",
            method: "POST",
            target,
            timestamp: ts,
            dispatchId: body.dispatch_id,
            dispatchAttempt: 1,
            body: payload,
          }),
        },
        body: payload,
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { decision: string }).decision).toBe("proceed");
    } finally {
      await kernel.close();
      await new Promise<void>((r) => agentServer.close(() => r()));
    }
  });

  test("failed deliveries back off, then exhaust the execution", async () => {
    h = await Harness.start(store, { dispatch: { maxAttempts: 3 } });
    h.webhookStatus = 503;
    const e = await h.create();
    await h.webhook(e.id, 1);
    await h.kernel.tick();
    let types = await h.eventTypes(e.id);
    expect(types.slice(-1)).toEqual(["dispatch.failed"]);
    // Not due until the backoff passes.
    await h.kernel.tick();
    expect(h.webhooksFor(e.id)).toHaveLength(1);
    h.advance(1250);
    await h.kernel.tick();
    expect(h.webhooksFor(e.id).map((w) => w.dispatch_attempt)).toEqual([1, 2]);
    h.advance(2500);
    await h.kernel.tick();
    expect(h.webhooksFor(e.id).map((w) => w.dispatch_attempt)).toEqual([1, 2, 3]);
    const ex = await h.execution(e.id);
    expect(ex).toMatchObject({ status: "failed", failure_reason: "dispatch_exhausted" });
    types = await h.eventTypes(e.id);
    expect(types.filter((t) => t === "dispatch.failed")).toHaveLength(3);
    expect(types.at(-1)).toBe("execution.failed");
    const failed = (await h.events(e.id)).at(-1);
    expect(failed.payload).toMatchObject({ status: "failed", reason: "dispatch_exhausted" });
  });

  test("backoff doubles from the base, is capped, and adds at most 25% jitter", () => {
    expect(backoffMs(1, 1000, 30_000, () => 0)).toBe(1000);
    expect(backoffMs(3, 1000, 30_000, () => 0)).toBe(4000);
    expect(backoffMs(10, 1000, 30_000, () => 0)).toBe(30_000);
    expect(backoffMs(2, 1000, 30_000, () => 0.999)).toBeCloseTo(2000 + 0.999 * 500);
  });

  test("an expired lease is reclaimed with the same dispatch id; the old attempt is current, not live", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 30 } });
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "tool_call", target: "slow", args: {} });
    expect(s.body.decision).toBe("proceed");
    h.advance(30_001);
    await h.kernel.tick();
    const w2 = await h.webhook(id, 2);
    expect(w2.dispatch_id).toBe(lease.dispatchId);
    // Old attempt: live-lease routes refuse…
    for (const path of ["heartbeat", "suspend"]) {
      const r = await h.agent("POST", `/v0/executions/${id}/${path}`, { lease });
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ code: "lease_superseded", message: "dispatch lease superseded" });
    }
    const refused = await h.submit(id, lease, { kind: "tool_call", target: "other", args: {} });
    expect(refused.body.code).toBe("lease_superseded");
    const done = await h.agent("POST", `/v0/executions/${id}/complete`, { body: { output: 1 }, lease });
    expect(done.body.code).toBe("lease_superseded");
    // …and after the re-claim even step complete (a *current* route) refuses the old attempt.
    const late = await h.complete(id, lease, s.body.step_id, "late");
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("lease_superseded");
    // The live attempt re-runs the safe_to_retry step from occurrence zero.
    const again = await h.submit(id, leaseOf(w2), { kind: "tool_call", target: "slow", args: {} });
    expect(again.body).toEqual({ decision: "proceed", step_id: s.body.step_id });
  });

  test("between reclaim and re-claim, step complete from the old attempt is still accepted", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 30, concurrency: 1 } });
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "tool_call", target: "slow", args: {} });
    // Occupy the only delivery worker so the reaped row stays pending (reclaimed, not re-claimed).
    const release = h.holdWebhooks();
    const other = await h.create("beta");
    h.advance(30_001);
    const ticking = h.kernel.tick(); // reaps synchronously; no free worker to re-claim
    try {
      const hb = await h.agent("POST", `/v0/executions/${id}/heartbeat`, { lease });
      expect(hb.body.code).toBe("lease_superseded");
      const c = await h.complete(id, lease, s.body.step_id, "ok");
      expect(c.body).toEqual({ decision: "recorded" });
    } finally {
      release();
      await ticking;
    }
    await h.webhook(other.id);
    await h.kernel.tick();
    const w2 = await h.webhook(id, 2);
    const replay = await h.submit(id, leaseOf(w2), { kind: "tool_call", target: "slow", args: {} });
    expect(replay.body).toEqual({ decision: "replay", step_id: s.body.step_id, result: "ok" });
  });

  test("heartbeat renews the lease so the reaper leaves it alone", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 30 } });
    const { id, lease } = await h.started();
    h.advance(20_000);
    const hb = await h.agent("POST", `/v0/executions/${id}/heartbeat`, { lease });
    expect(hb.status).toBe(204);
    h.advance(20_000);
    await h.kernel.tick();
    expect(h.webhooksFor(id)).toHaveLength(1);
    const hb2 = await h.agent("POST", `/v0/executions/${id}/heartbeat`, { lease });
    expect(hb2.status).toBe(204);
  });

  test("lease expiries beyond max attempts exhaust the execution", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 10, maxAttempts: 2 } });
    const e = await h.create();
    await h.webhook(e.id, 1);
    h.advance(10_001);
    await h.kernel.tick();
    await h.webhook(e.id, 2);
    h.advance(10_001);
    await h.kernel.tick();
    expect(await h.execution(e.id)).toMatchObject({ status: "failed", failure_reason: "dispatch_exhausted" });
    expect(h.webhooksFor(e.id)).toHaveLength(2);
  });

  test("missing or malformed lease headers are 400 on lease routes", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const missing = await h.agent("POST", `/v0/executions/${id}/heartbeat`, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      code: "validation_error",
      message: "validation error: missing dispatch lease",
    });
    const bad = await h.agent("POST", `/v0/executions/${id}/steps`, {
      body: { kind: "local", target: "x" },
      lease: { dispatchId: lease.dispatchId, attempt: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_error");
    const wrongDispatch = await h.agent("POST", `/v0/executions/${id}/heartbeat`, {
      lease: { dispatchId: "01920000-0000-7000-8000-000000000001", attempt: 1 },
    });
    expect(wrongDispatch.body.code).toBe("lease_superseded");
  });
});
