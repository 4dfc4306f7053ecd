import { KernelError, NetworkError, NotFoundError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StreamDelta } from "../src/index.js";
import { type FakeKernel, startFakeKernel } from "./fake-kernel.js";
import { clientFor, quietLogger } from "./helpers.js";

const ID = "0192f1a0-0000-7000-8000-000000000000";
const STEP_A = "a".repeat(64);
const STEP_B = "b".repeat(64);

function frame(stepId: string, seq: number, data: string): string {
  return `data: ${JSON.stringify({ step_id: stepId, seq, data })}\n\n`;
}

async function collect(iterable: AsyncIterable<StreamDelta>): Promise<StreamDelta[]> {
  const out: StreamDelta[] = [];
  for await (const d of iterable) out.push(d);
  return out;
}

let kernel: FakeKernel;
beforeEach(async () => {
  kernel = await startFakeKernel();
});
afterEach(async () => {
  await kernel.close();
});

describe("stream", () => {
  it("parses frames split across network chunks and skips keep-alives", async () => {
    const client = clientFor(kernel);
    const text = `: keep-alive\n\n${frame(STEP_A, 0, "Hel")}${frame(STEP_A, 1, "lo ✓ wörld")}: keep-alive\n\n${frame(STEP_B, 0, "data: {\n}")}`;
    const bytes = Buffer.from(text, "utf8");
    // Cut at awkward places: inside "data:", inside the JSON, between the two \n, inside ✓ (3 bytes).
    const check = bytes.indexOf(Buffer.from("✓")) + 1;
    const cuts = [3, 20, text.indexOf("\n\n", 20) + 1, check, bytes.length - 7];
    const chunks: Uint8Array[] = [];
    let last = 0;
    for (const c of [...cuts].sort((a, b) => a - b)) {
      chunks.push(bytes.subarray(last, c));
      last = c;
    }
    chunks.push(bytes.subarray(last));
    kernel.reply({ status: 200, chunks, gapMs: 15 });

    const deltas = await collect(client.stream(ID));
    expect(deltas).toEqual([
      { stepId: STEP_A, seq: 0, data: "Hel" },
      { stepId: STEP_A, seq: 1, data: "lo ✓ wörld" },
      { stepId: STEP_B, seq: 0, data: "data: {\n}" },
    ]);
    const req = kernel.requests[0]!;
    expect(req).toMatchObject({ method: "GET", path: `/v0/executions/${ID}/stream` });
    expect(req.headers.accept).toBe("text/event-stream");
    expect(req.headers.authorization).toBe("Bearer test-key");
  });

  it("streams through an injected fetch too", async () => {
    const client = clientFor(kernel, { fetch: (request: Request) => fetch(request) });
    kernel.reply({ status: 200, chunks: [frame(STEP_A, 0, "x"), ": keep-alive\n\n", frame(STEP_A, 1, "y")] });
    expect((await collect(client.stream(ID))).map((d) => d.data)).toEqual(["x", "y"]);
  });

  it("reports per-step seq gaps on the delta after the hole", async () => {
    const client = clientFor(kernel);
    kernel.reply({
      status: 200,
      chunks: [
        frame(STEP_A, 0, "a0"),
        frame(STEP_B, 2, "b2"),
        frame(STEP_A, 3, "a3"),
        frame(STEP_A, 4, "a4"),
      ],
    });
    const deltas = await collect(client.stream(ID));
    expect(deltas.map((d) => [d.data, d.gap])).toEqual([
      ["a0", undefined],
      ["b2", { expectedSeq: 0, missed: 2 }],
      ["a3", { expectedSeq: 1, missed: 2 }],
      ["a4", undefined],
    ]);
  });

  it("logs and skips a malformed frame; the gap shows what it hid", async () => {
    const logger = quietLogger();
    const client = clientFor(kernel, { logger });
    kernel.reply({
      status: 200,
      chunks: [
        frame(STEP_A, 0, "a0"),
        "data: {not json\n\n",
        "event: other\ndata: {}\n\n",
        frame(STEP_A, 2, "a2"),
      ],
    });
    const deltas = await collect(client.stream(ID));
    expect(deltas.map((d) => d.seq)).toEqual([0, 2]);
    expect(deltas[1]!.gap).toEqual({ expectedSeq: 1, missed: 1 });
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0]![0]).toBe("skipped a malformed stream frame");
  });

  it("aborting the signal closes the connection and ends the loop quietly", async () => {
    const client = clientFor(kernel);
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => (closed = r));
    kernel.reply((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(frame(STEP_A, 0, "first"));
      res.on("close", () => closed());
    });
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const d of client.stream(ID, { signal: controller.signal })) {
      seen.push(d.data);
      controller.abort();
    }
    expect(seen).toEqual(["first"]);
    await serverSawClose;
  });

  it("breaking out of the loop closes the connection", async () => {
    const client = clientFor(kernel);
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => (closed = r));
    kernel.reply((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      res.write(frame(STEP_A, 0, "x"));
      res.on("close", () => closed());
    });
    for await (const d of client.stream(ID)) {
      expect(d.data).toBe("x");
      break;
    }
    await serverSawClose;
  });

  it("an already aborted signal sends nothing", async () => {
    const client = clientFor(kernel);
    expect(await collect(client.stream(ID, { signal: AbortSignal.abort() }))).toEqual([]);
    expect(kernel.requests).toHaveLength(0);
  });

  it("maps error answers and refuses a non-SSE body", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 404, json: { code: "not_found", message: "not found" } });
    await expect(collect(client.stream(ID))).rejects.toBeInstanceOf(NotFoundError);
    kernel.reply({ status: 200, json: { hello: 1 } });
    const err = await collect(client.stream(ID)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KernelError);
    expect(err).toMatchObject({ code: "invalid_response" });
  });

  it("a connection cut mid-stream is a NetworkError after the deltas already read", async () => {
    const client = clientFor(kernel);
    kernel.reply((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(frame(STEP_A, 0, "ok"));
      setTimeout(() => res.socket?.destroy(), 30);
    });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const d of client.stream(ID)) seen.push(d.data);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["ok"]);
    expect(err).toBeInstanceOf(NetworkError);
  });
});
