// Live stream (docs/protocol.md §4.5): SSE headers, frames, no replay, per-subscriber buffer.
import { afterEach, describe, expect, test } from "vitest";
import { SSE_HIGH_WATER_MARK } from "../src/http/fetch-adapter.js";
import { SUBSCRIBER_BUFFER } from "../src/stream-bus.js";
import { BASE, Harness } from "./harness.js";
import { stores } from "./stores.js";

async function readFrames(reader: ReadableStreamDefaultReader<Uint8Array>, count: number): Promise<string[]> {
  const decoder = new TextDecoder();
  let buf = "";
  const frames: string[] = [];
  while (frames.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i = buf.indexOf("\n\n");
    while (i >= 0) {
      frames.push(buf.slice(0, i + 2));
      buf = buf.slice(i + 2);
      i = buf.indexOf("\n\n");
    }
  }
  return frames;
}

describe.each(stores)("stream ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("SSE delivers deltas published after subscribing, in order", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "llm_call", target: "m", args: {} });
    const path = `/v0/executions/${id}/steps/${s.body.step_id}/stream`;
    // Published before anyone listens: never seen (no replay buffer).
    await h.agent("POST", path, { body: { seq: 0, data: "early" }, lease });
    const res = await h.kernel.fetch(new Request(`${BASE}/v0/executions/${id}/stream`));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    const reader = res.body!.getReader();
    await h.agent("POST", path, { body: { seq: 1, data: "Hel" }, lease });
    await h.agent("POST", path, { body: { seq: 2, data: 'lo "x"\n' }, lease });
    const frames = await readFrames(reader, 2);
    expect(frames).toEqual([
      `data: ${JSON.stringify({ step_id: s.body.step_id, seq: 1, data: "Hel" })}\n\n`,
      `data: ${JSON.stringify({ step_id: s.body.step_id, seq: 2, data: 'lo "x"\n' })}\n\n`,
    ]);
    await reader.cancel();
  });

  test("a slow subscriber keeps at most its buffer; the publisher never blocks", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "llm_call", target: "m", args: {} });
    const path = `/v0/executions/${id}/steps/${s.body.step_id}/stream`;
    const res = await h.kernel.fetch(new Request(`${BASE}/v0/executions/${id}/stream`));
    const reader = res.body!.getReader();
    // Publish many deltas synchronously-ish without reading: all answer 204.
    const answers = await Promise.all(
      Array.from({ length: SUBSCRIBER_BUFFER * 3 }, (_, i) =>
        h.agent("POST", path, { body: { seq: i, data: "d" }, lease }),
      ),
    );
    expect(answers.every((a) => a.status === 204)).toBe(true);
    await h.agent("POST", `/v0/executions/${id}/complete`, { body: { output: 1 }, lease });
    const frames: string[] = [];
    const decoder = new TextDecoder();
    let text = "";
    const deadline = Date.now() + 300;
    while (Date.now() < deadline) {
      const r = await Promise.race([
        reader.read(),
        new Promise<null>((res) => setTimeout(() => res(null), 50)),
      ]);
      if (r === null || r.done) break;
      text += decoder.decode(r.value);
    }
    for (const f of text.split("\n\n")) if (f.startsWith("data: ")) frames.push(f);
    // What the response stream queued before congestion plus the subscriber's own buffer; the
    // rest was dropped for this subscriber only.
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.length).toBeLessThanOrEqual(SSE_HIGH_WATER_MARK + SUBSCRIBER_BUFFER);
    await reader.cancel();
  });

  test("a terminal execution's subscribers get one named execution.terminal event", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const res = await h.kernel.fetch(new Request(`${BASE}/v0/executions/${id}/stream`));
    const reader = res.body!.getReader();
    await h.agent("POST", `/v0/executions/${id}/complete`, { body: { output: 1 }, lease });
    const [frame] = await readFrames(reader, 1);
    expect(frame).toBe(`event: execution.terminal\ndata: {"execution_id":"${id}","status":"completed"}\n\n`);
    await reader.cancel();
  });

  test("aborting the request's signal ends an in-process stream and unsubscribes", async () => {
    h = await Harness.start(store);
    const { id } = await h.started();
    const controller = new AbortController();
    const res = await h.kernel.fetch(
      new Request(`${BASE}/v0/executions/${id}/stream`, { signal: controller.signal }),
    );
    const reader = res.body!.getReader();
    const pending = reader.read();
    expect((await h.client("GET", "/metrics")).text).toContain("rebuno_stream_subscribers 1");
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect((await h.client("GET", "/metrics")).text).toContain("rebuno_stream_subscribers 0");
  });

  test("stream of an unknown execution → 404; needs executions:read", async () => {
    h = await Harness.start(store, { devMode: false, bootstrapToken: "root" });
    const missing = await h.client(
      "GET",
      "/v0/executions/01920000-0000-7000-8000-000000000009/stream",
      undefined,
      "root",
    );
    expect(missing.status).toBe(404);
    expect((await h.client("GET", "/v0/executions/01920000-0000-7000-8000-000000000009/stream")).status).toBe(
      401,
    );
  });

  test("SSE over a socket ends when the kernel closes", async () => {
    h = await Harness.start(store);
    const base = await h.kernel.listen();
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "llm_call", target: "m", args: {} });
    const res = await fetch(`${base}/v0/executions/${id}/stream`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await h.agent("POST", `/v0/executions/${id}/steps/${s.body.step_id}/stream`, {
      body: { seq: 0, data: "x" },
      lease,
    });
    const [frame] = await readFrames(reader, 1);
    expect(frame).toContain('"data":"x"');
    await h.kernel.close();
    const end = await reader.read();
    expect(end.done).toBe(true);
  });

  // Regression: the socket an SSE response used became idle only after close() ended the
  // stream, so server.close() waited for its 5 s keep-alive timeout.
  test.each(["cancelled", "still open"])("close() is prompt after a socket stream (%s)", async (mode) => {
    h = await Harness.start(store);
    const base = await h.kernel.listen();
    const { id } = await h.started();
    // A keep-alive request on its own connection too (idle at close time).
    expect((await fetch(`${base}/v0/health`)).status).toBe(200);
    const res = await fetch(`${base}/v0/executions/${id}/stream`);
    const reader = res.body!.getReader();
    if (mode === "cancelled") await reader.cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const t0 = performance.now();
    await h.kernel.close();
    // The hang this guards against is the 5 s keep-alive timeout. close() also closes the store (on
    // SQLite: writes what is pending, compacts, checkpoints the WAL), which alone can take hundreds
    // of ms on a busy disk, so the bound sits well between the two.
    expect(performance.now() - t0).toBeLessThan(3000);
    if (mode === "still open") expect((await reader.read()).done).toBe(true);
  });
});
