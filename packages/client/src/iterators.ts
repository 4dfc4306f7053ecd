/**
 * The long-running reads of the client: following an execution's event log, its live SSE stream,
 * and waiting for a terminal status. They are written against small function dependencies so the
 * `Client` class stays a thin map of routes.
 */
import type { HttpCore, TransportLogger } from "@rebuno/kernel-transport";
import {
  type Event,
  type Execution,
  isTerminalExecutionStatus,
  KernelError,
  NetworkError,
  TimeoutError,
} from "@rebuno/protocol";
import { parseStreamFrame, SseDecoder, type StreamDelta, StreamSequencer } from "./sse.js";

/** Options of `Client.followEvents`. */
export interface FollowEventsOptions {
  /** Start after this event sequence number (default 0: from the first event). */
  readonly afterSeq?: number | undefined;
  /** Delay between polls once caught up, in ms (default 500). */
  readonly pollMs?: number | undefined;
  /** Page size per request (default 100, kernel maximum 1000). */
  readonly limit?: number | undefined;
  /** Aborting ends the iteration quietly (no exception), also while waiting between polls. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of `Client.stream`. */
export interface StreamOptions {
  /** Aborting closes the connection and ends the iteration quietly (no exception). */
  readonly signal?: AbortSignal | undefined;
}

/** Options of `Client.waitForTerminal`. */
export interface WaitForTerminalOptions {
  /** Give up after this many ms with a `TimeoutError` (default 300 000 = 5 min). */
  readonly timeoutMs?: number | undefined;
  /** Delay between status polls in ms (default 500); with a stream that announces the end, only the fallback. */
  readonly pollMs?: number | undefined;
  /** Aborting rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
}

/** Default poll interval of `followEvents` and `waitForTerminal`. */
export const DEFAULT_POLL_MS = 500;
/** Default overall limit of `waitForTerminal`. */
export const DEFAULT_WAIT_TIMEOUT_MS = 300_000;
/** Default page size of `events` / `followEvents` (the kernel's own default). */
export const DEFAULT_EVENTS_LIMIT = 100;

// Event types after which an execution's log is complete: the terminal transition and its
// companion events are appended in one transaction (docs/protocol.md §1.6, §4.6, §4.13).
const TERMINAL_EVENT_TYPES = new Set(["execution.completed", "execution.failed", "execution.cancelled"]);

function checkPositive(value: number, what: string): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${what} must be a positive number, got ${value}`);
  return value;
}

/** Sleep `ms`; resolves `false` early (without throwing) when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** What {@link followEvents} needs from the client. */
export interface FollowEventsDeps {
  events(
    id: string,
    options: { afterSeq: number; limit: number; signal?: AbortSignal | undefined },
  ): Promise<Event[]>;
  get(id: string, options: { signal?: AbortSignal | undefined }): Promise<Execution>;
}

/**
 * Yield every event of an execution from `afterSeq` on, polling until the execution is terminal
 * and its log has been read to the end. Pages are read back to back while they come back full.
 */
export async function* followEvents(
  deps: FollowEventsDeps,
  id: string,
  options: FollowEventsOptions = {},
): AsyncGenerator<Event, void, undefined> {
  const { signal } = options;
  const pollMs = checkPositive(options.pollMs ?? DEFAULT_POLL_MS, "pollMs");
  const limit = checkPositive(options.limit ?? DEFAULT_EVENTS_LIMIT, "limit");
  let afterSeq = options.afterSeq ?? 0;
  let terminal = false;
  try {
    for (;;) {
      const page = await deps.events(id, { afterSeq, limit, signal });
      for (const event of page) {
        // Guards against a kernel that ignores after_seq: never yield an event twice.
        if (event.eventSeq <= afterSeq) continue;
        afterSeq = event.eventSeq;
        if (TERMINAL_EVENT_TYPES.has(event.type)) terminal = true;
        yield event;
      }
      if (page.length >= limit) continue; // more may be waiting right now
      if (terminal) return;
      // The log may lack the terminal event only because the status changed after our read, or
      // because a future kernel names it differently: the status is the authority. Once it is
      // terminal, one more read returns everything (the log is written in the same transaction).
      const execution = await deps.get(id, { signal });
      if (isTerminalExecutionStatus(execution.status)) {
        terminal = true;
        continue;
      }
      if (!(await delay(pollMs, signal))) return;
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  }
}

/** Opens the execution's SSE stream (`GET …/stream`); absent where the kernel has none to wait on. */
export type OpenTerminalStream = (signal: AbortSignal) => Promise<Response>;

/** The named SSE event the dev kernel sends on an execution's stream when it turns terminal. */
export const TERMINAL_STREAM_EVENT = "execution.terminal";

/**
 * Wait until the execution is `completed`, `failed` or `cancelled` and return it. With
 * `openStream` it follows the execution's SSE stream and re-reads the status as soon as the
 * kernel announces the end (`event: execution.terminal`), so the result arrives on the call; the
 * status poll every `pollMs` stays as the fallback (a kernel without the notice, a broken stream).
 * Throws `TimeoutError` (with the last status in `details`) when `timeoutMs` passes first.
 */
export async function waitForTerminal(
  get: (id: string, options: { signal?: AbortSignal | undefined }) => Promise<Execution>,
  id: string,
  options: WaitForTerminalOptions = {},
  openStream?: OpenTerminalStream,
): Promise<Execution> {
  const { signal } = options;
  const timeoutMs = checkPositive(options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS, "timeoutMs");
  const pollMs = checkPositive(options.pollMs ?? DEFAULT_POLL_MS, "pollMs");
  const deadline = Date.now() + timeoutMs;
  const wake = new Wakeup();
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    // Subscribe before the first read: a terminal transition after that read is then announced
    // to us, and one before it is seen by the read itself.
    if (openStream !== undefined && !signal?.aborted) await watchTerminal(openStream, stop.signal, wake);
    for (;;) {
      signal?.throwIfAborted();
      const execution = await get(id, { signal });
      if (isTerminalExecutionStatus(execution.status)) return execution;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new TimeoutError(
          `execution ${id} did not reach a terminal status within ${timeoutMs} ms (last status: ${execution.status})`,
          { details: { executionId: id, lastStatus: execution.status } },
        );
      }
      await wake.wait(Math.min(pollMs, left), signal);
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
}

/** A sleep that a hint ends early; a hint given while nobody sleeps ends the next sleep at once. */
class Wakeup {
  #pending = false;
  #resolve: (() => void) | undefined;

  notify(): void {
    if (this.#resolve === undefined) this.#pending = true;
    else this.#resolve();
  }

  async wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return;
    }
    const hinted = new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await Promise.race([hinted, delay(ms, stop.signal)]);
    } finally {
      this.#resolve = undefined;
      signal?.removeEventListener("abort", onAbort);
      stop.abort();
    }
  }
}

/**
 * Open the stream and return once it is subscribed (or failed to open). Reading continues in the
 * background until `signal` aborts; each terminal notice wakes the waiter. Any failure (no such
 * route, not SSE, a broken connection) only ends the watch: the status poll covers it.
 */
async function watchTerminal(
  openStream: OpenTerminalStream,
  signal: AbortSignal,
  wake: Wakeup,
): Promise<void> {
  let response: Response;
  try {
    response = await openStream(signal);
  } catch {
    return;
  }
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const reader = response.body?.getReader();
  if (reader === undefined) return;
  if (type !== "text/event-stream") {
    await reader.cancel().catch(() => undefined);
    return;
  }
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  void (async () => {
    const decoder = new SseDecoder();
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        for (const message of decoder.push(chunk.value)) {
          if (message.event === TERMINAL_STREAM_EVENT) wake.notify();
        }
      }
    } catch {
      // The stream broke or was cancelled: the poll continues alone.
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  })();
}

/**
 * Open `GET /v0/executions/{id}/stream` and yield its deltas. See `Client.stream`.
 */
export async function* streamDeltas(
  core: HttpCore,
  path: string,
  logger: TransportLogger,
  options: StreamOptions = {},
): AsyncGenerator<StreamDelta, void, undefined> {
  const { signal } = options;
  // Our own controller closes the connection when the consumer stops early (`break`), not only
  // when the caller's signal aborts.
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) return;
  signal?.addEventListener("abort", onAbort, { once: true });
  let response: Response;
  try {
    // A GET with no replay buffer: re-opening after a failed connect loses nothing that the first
    // attempt would have delivered, so the core's idempotent retry rule applies.
    response = await core.open({
      method: "GET",
      path,
      headers: { accept: "text/event-stream" },
      signal: controller.signal,
    });
  } catch (err) {
    signal?.removeEventListener("abort", onAbort);
    if (signal?.aborted) return;
    throw err;
  }
  const reader = response.body?.getReader();
  try {
    const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "text/event-stream") {
      throw new KernelError(`GET ${path}: expected text/event-stream, got '${type || "no content type"}'`, {
        status: response.status,
        code: "invalid_response",
      });
    }
    if (reader === undefined) return;
    const decoder = new SseDecoder();
    const sequencer = new StreamSequencer();
    for (;;) {
      const chunk = await reader.read().catch((cause: unknown) => {
        if (signal?.aborted) return undefined;
        const why = cause instanceof Error ? cause.message : String(cause);
        throw new NetworkError(`GET ${path}: the stream broke: ${why}`, { cause });
      });
      if (chunk === undefined) return; // aborted by the caller
      if (chunk.done) {
        decoder.end();
        return;
      }
      for (const message of decoder.push(chunk.value)) {
        if (message.event !== "message") continue; // the kernel names no events; skip foreign ones
        const frame = parseStreamFrame(message.data);
        if (frame === undefined) {
          // One bad frame should not end a live view; the sequencer reports what it hid as a gap.
          logger.warn("skipped a malformed stream frame", { path, data: message.data.slice(0, 200) });
          continue;
        }
        yield sequencer.accept(frame);
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    controller.abort();
    await reader?.cancel().catch(() => undefined);
  }
}
