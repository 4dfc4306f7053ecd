/**
 * Streams an LLM response to the caller unchanged while publishing live deltas and recording the
 * assembled text once, at the end (F31). Chunks are accumulated before they are handed to the
 * consumer, so a consumer that stops right after a chunk still has it recorded.
 */
import type { LlmRecord } from "./record.js";

// Kernel limit is 7000 bytes per delta: 1750 chars of up to 4 UTF-8 bytes each.
const FLUSH_CHARS = 2000;
const FLUSH_MS = 50;
const SLICE_CHARS = 1750;

/** Callbacks the tee reports to. */
export interface StreamSink {
  /** Best-effort live delta. */
  delta(seq: number, data: string): void;
  /** The whole stream, once (end of stream, or the consumer cancelled). */
  record(record: LlmRecord): Promise<void>;
  /** The provider stream failed mid-way. */
  fail(error: unknown): Promise<void>;
  /** Called exactly once when the call is over (recorded or failed). */
  done(): void;
}

/** Wraps `body` of `response`; the returned stream is what the caller reads. */
export function teeStream(response: Response, sink: StreamSink): ReadableStream<Uint8Array> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const contentType = response.headers.get("content-type") ?? "text/event-stream";
  let whole = "";
  let pending = "";
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;

  const flush = () => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    while (pending.length > 0) {
      sink.delta(seq++, pending.slice(0, SLICE_CHARS));
      pending = pending.slice(SLICE_CHARS);
    }
  };
  const settle = async (outcome: () => Promise<void>) => {
    if (settled) return;
    settled = true;
    flush();
    try {
      await outcome();
    } finally {
      sink.done();
    }
  };
  const finish = () =>
    settle(() =>
      sink.record({ status: response.status, headers: { "content-type": contentType }, body: whole }),
    );

  // highWaterMark 0: read from the provider only when the consumer asks, so what is recorded on
  // an early cancel is what the consumer was given.
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          await settle(() => sink.fail(error));
          controller.error(error);
          return;
        }
        if (chunk.done) {
          const tail = decoder.decode();
          whole += tail;
          pending += tail;
          await finish();
          controller.close();
          return;
        }
        const text = decoder.decode(chunk.value, { stream: true });
        whole += text;
        pending += text;
        if (pending.length >= FLUSH_CHARS) flush();
        else if (timer === undefined) timer = setTimeout(flush, FLUSH_MS);
        controller.enqueue(chunk.value);
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => {});
        await finish();
      },
    },
    { highWaterMark: 0 },
  );
}
