/** Web `fetch` adapter: `Request` → core → `Response`, for in-process use without sockets. */
import { tooLarge } from "./node-adapter.js";
import type { CoreBodyResponse, CoreHandler, CoreResponse, CoreStreamResponse } from "./types.js";

/** Chunks the Web stream of an SSE response queues before reporting congestion to the bus. */
export const SSE_HIGH_WATER_MARK = 16;

async function readCapped(request: Request, maxBodyBytes: number): Promise<Buffer | undefined> {
  if (request.body === null) return Buffer.alloc(0);
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBodyBytes) {
    await request.body.cancel().catch(() => undefined);
    return undefined;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBodyBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

function toResponse(r: CoreBodyResponse): Response {
  return new Response(r.status === 204 ? null : r.body, { status: r.status, headers: r.headers });
}

/**
 * An SSE response whose body ends when the request's signal aborts — what a network `fetch` does
 * when the caller aborts, so in-process clients see the same behaviour as over a socket.
 */
function toStream(r: CoreStreamResponse, signal: AbortSignal): Response {
  const encoder = new TextEncoder();
  let control: ReturnType<CoreStreamResponse["stream"]["open"]> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const onAbort = (): void => {
          control?.close();
          try {
            controller.error(signal.reason ?? new DOMException("The operation was aborted.", "AbortError"));
          } catch {
            // already closed
          }
        };
        control = r.stream.open(
          (chunk) => {
            controller.enqueue(encoder.encode(chunk));
            return (controller.desiredSize ?? 1) > 0;
          },
          () => {
            signal.removeEventListener("abort", onAbort);
            try {
              controller.close();
            } catch {
              // already closed or cancelled
            }
          },
        );
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      },
      pull() {
        control?.drain();
      },
      cancel() {
        control?.close();
      },
    },
    { highWaterMark: SSE_HIGH_WATER_MARK },
  );
  return new Response(body, { status: r.status, headers: r.headers });
}

/** Serve one Web `Request` with the core handler. */
export async function serveFetch(
  handle: CoreHandler,
  request: Request,
  maxBodyBytes: number,
): Promise<Response> {
  const body = await readCapped(request, maxBodyBytes);
  if (body === undefined) return toResponse(tooLarge());
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const r: CoreResponse = await handle({
    method: request.method,
    target: url.pathname + url.search,
    headers,
    body,
  });
  return "stream" in r ? toStream(r, request.signal) : toResponse(r);
}
