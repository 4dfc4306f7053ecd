/**
 * The hot-path engine: a keep-alive `undici.Pool` driven through `pool.dispatch` with a minimal
 * handler. `pool.request` + `body.text()` wraps every answer in a Readable stream, an
 * AsyncResource and several promises; this handler collects the body Buffers and reports once to
 * the HTTP core, which keeps the one promise per logical call (docs/design/transport.md §2).
 *
 * What it keeps from `pool.request`: per-attempt `headersTimeout`/`bodyTimeout` (undici's own
 * timer wheel), the caller's abort signal (also while the request waits in the pool's queue), and
 * the error objects themselves: every failure is undici's original error (or the abort reason),
 * so the unsent/ambiguous classification in errors.ts reads the same `code`s as before.
 */
import { type Dispatcher, Pool } from "undici";
import { type Cancellable, unwatchAbort, type Watch, watchAbort } from "./abort-watch.js";
import type { AttemptSink, Engine, WireRequest, WireResponse } from "./engine.js";
import { FetchEngine } from "./fetch-engine.js";

type NodeHeaders = Record<string, string | string[] | undefined>;

const NO_HEADERS: NodeHeaders = Object.freeze({});

class NodeResponse implements WireResponse {
  constructor(
    readonly status: number,
    private readonly headers: NodeHeaders,
    readonly text: string,
  ) {}
  header(name: string): string | undefined {
    const v = this.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }
}

// UTF-8 decoding as undici's `body.text()` does it (a leading BOM is dropped), so the text the
// core parses is the same as with `pool.request`.
function decodeUtf8(body: Buffer): string {
  const start = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  return body.toString("utf8", start);
}

/**
 * One attempt on the pool. Reports to the sink exactly once: the answer, undici's error, or the
 * abort reason.
 */
class Exchange implements Dispatcher.DispatchHandler, Cancellable {
  private controller: Dispatcher.DispatchController | undefined = undefined;
  private status = 0;
  private headers: NodeHeaders = NO_HEADERS;
  private first: Buffer | undefined = undefined;
  private rest: Buffer[] | undefined = undefined;
  private size = 0;
  private settled = false;
  /** Why the request was cancelled before it reached a socket. */
  private cancelledWith: unknown = undefined;
  /** Set while the request is watched for its signal's abort. */
  watch: Watch | undefined = undefined;

  constructor(private readonly sink: AttemptSink) {}

  /** The caller's signal aborted (abort-watch.ts calls this). */
  cancel(reason: unknown): void {
    if (this.controller !== undefined) {
      this.controller.abort(reason as Error); // undici fails the request: onResponseError(reason)
    } else {
      // Still queued in the pool (no socket yet): answer now instead of when a socket frees up.
      // onRequestStart cancels it before a byte is written.
      this.cancelledWith = reason;
      this.settle(undefined, reason);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // undici may start a request more than once (a pipelined request re-queued after its socket
    // failed): every start begins a fresh answer.
    this.status = 0;
    this.headers = NO_HEADERS;
    this.first = undefined;
    this.rest = undefined;
    this.size = 0;
    if (this.settled) controller.abort(this.cancelledWith as Error);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: NodeHeaders,
  ): void {
    if (statusCode < 200) return; // 1xx informational; the final answer follows
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    // undici hands over a fresh Buffer per socket read; keeping references is safe (pool.request's
    // Readable keeps them the same way).
    if (this.first === undefined) this.first = chunk;
    else (this.rest ??= []).push(chunk);
    this.size += chunk.length;
  }

  onResponseEnd(): void {
    let body: Buffer;
    if (this.first === undefined) body = Buffer.alloc(0);
    else if (this.rest === undefined) body = this.first;
    else body = Buffer.concat([this.first, ...this.rest], this.size);
    this.settle(new NodeResponse(this.status, this.headers, decodeUtf8(body)), undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: unknown): void {
    this.settle(undefined, error);
  }

  private settle(response: WireResponse | undefined, error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (this.watch !== undefined) unwatchAbort(this.watch, this);
    if (response !== undefined) this.sink.onResponse(response);
    else this.sink.onFailure(error);
  }
}

/**
 * Keep-alive `undici.Pool` for one origin. Dispatch never follows redirects; undici unrefs idle
 * sockets (an idle transport never holds the process open) and honours the server's
 * `Keep-Alive: timeout` hint, which avoids most writes into a socket the server already closed.
 */
export class UndiciEngine implements Engine {
  readonly name = "undici" as const;
  private readonly pool: Pool;
  private readonly fallback: FetchEngine;

  constructor(origin: string, connections: number) {
    this.pool = new Pool(origin, { connections, pipelining: 1 });
    this.fallback = new FetchEngine(origin, (r) => fetch(r));
  }

  send(req: WireRequest, sink: AttemptSink): void {
    if (req.pendingHeaders !== undefined) {
      // Only an `attemptHeaders` hook that returns a promise gets here; the agent signer is
      // synchronous on this engine, so the hot path never waits.
      req.pendingHeaders.then(
        (extra) =>
          this.send({ ...req, headers: { ...req.headers, ...extra }, pendingHeaders: undefined }, sink),
        (error: unknown) => sink.onFailure(error),
      );
      return;
    }
    const signal = req.signal;
    if (signal?.aborted) {
      sink.onFailure(signal.reason);
      return;
    }
    const exchange = new Exchange(sink);
    if (signal !== undefined) exchange.watch = watchAbort(signal, exchange);
    // headersTimeout bounds the wait for the answer, bodyTimeout every gap while it streams in:
    // for the small JSON bodies the kernel sends that is the per-attempt timeout. A dispatch
    // error (closed pool, invalid header) arrives through onResponseError, never as a throw.
    this.pool.dispatch(
      {
        path: req.target,
        method: req.method as Dispatcher.HttpMethod,
        headers: req.headers,
        body: req.body ?? null,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      },
      exchange,
    );
  }

  // Streams are cold paths and callers want a Web `Response`; the global fetch gives one.
  open(req: WireRequest): Promise<Response> {
    return this.fallback.open(req);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
