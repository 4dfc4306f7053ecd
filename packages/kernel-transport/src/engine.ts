/**
 * The two ways a request reaches the kernel. Both take fully prepared bytes and headers (the
 * signature is computed before an engine sees the request) and report the whole response text;
 * neither follows redirects, retries, or interprets status codes.
 *
 * - `UndiciEngine` (undici-engine.ts): `undici` `Pool.dispatch` over keep-alive sockets. The hot
 *   path for real kernels (http/https base URL, no injected `fetch`); see
 *   docs/design/transport.md §2 for the measurements behind it.
 * - {@link FetchEngine}: ky over an injected `fetch` (in-process dev kernel, MSW, custom proxies).
 */
import ky, { type KyInstance } from "ky";

/** A request ready for the wire. */
export interface WireRequest {
  readonly method: string;
  /** Request target exactly as on the request line (path prefix + escaped path + query). */
  readonly target: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** A complete response: status, headers, body text. */
export interface WireResponse {
  readonly status: number;
  readonly text: string;
  /** First value of a response header (case-insensitive name). */
  header(name: string): string | undefined;
}

/**
 * Receives the outcome of one attempt. An engine calls exactly one of the two methods, exactly
 * once, and never throws out of `send`. The callbacks may run inside the HTTP client's own
 * callbacks, so they must not throw and must not do work with side effects on other requests
 * synchronously (the HTTP core defers its failure handling; see request-run.ts).
 */
export interface AttemptSink {
  /** Any complete answer, whatever its status. */
  onResponse(response: WireResponse): void;
  /** No complete answer: the low-level error (socket, timeout, abort reason, bad argument). */
  onFailure(error: unknown): void;
}

/** Something that sends {@link WireRequest}s. */
export interface Engine {
  readonly name: "undici" | "fetch";
  /** Send one attempt; its outcome goes to `sink`. */
  send(request: WireRequest, sink: AttemptSink): void;
  /** A streaming response (SSE); the timeout covers only the wait for headers. */
  open(request: WireRequest): Promise<Response>;
  close(): Promise<void>;
}

/** `fetch` as injected by callers; only the `Request` argument form is used. */
export type FetchLike = (request: Request) => Promise<Response>;

class WebResponse implements WireResponse {
  constructor(
    readonly status: number,
    private readonly headers: Headers,
    readonly text: string,
  ) {}
  header(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }
}

function timeoutReason(ms: number): DOMException {
  return new DOMException(`request timed out after ${ms} ms`, "TimeoutError");
}

/**
 * ky over an injected `fetch`. ky's own retry and timeout are off: every attempt must be re-signed
 * with a fresh timestamp (done by the caller) and the timeout has to cover reading the body too,
 * which ky's does not. ky still normalizes the call to `fetch(new Request(...))`, which is the one
 * form a Web handler such as the dev kernel's `fetch(request)` accepts.
 */
export class FetchEngine implements Engine {
  readonly name = "fetch" as const;
  private readonly ky: KyInstance;
  private readonly origin: string;

  constructor(origin: string, fetchFn: FetchLike) {
    this.origin = origin;
    this.ky = ky.create({
      fetch: (input: Request | URL | string, init?: RequestInit) =>
        fetchFn(input instanceof Request ? input : new Request(input, init)),
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      redirect: "manual",
    });
  }

  private call(req: WireRequest, signal: AbortSignal): Promise<Response> {
    return this.ky(this.origin + req.target, {
      method: req.method,
      headers: req.headers,
      // A Uint8Array view, not the Buffer itself: some fetch polyfills reject Buffer subclasses.
      body:
        req.body === undefined ? null : new Uint8Array(req.body.buffer, req.body.byteOffset, req.body.length),
      signal,
    });
  }

  send(req: WireRequest, sink: AttemptSink): void {
    this.fetchText(req).then(
      (res) => sink.onResponse(res),
      (err: unknown) => sink.onFailure(err),
    );
  }

  private async fetchText(req: WireRequest): Promise<WireResponse> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(timeoutReason(req.timeoutMs)), req.timeoutMs);
    const signal =
      req.signal === undefined ? controller.signal : AbortSignal.any([req.signal, controller.signal]);
    try {
      const res = await this.call(req, signal);
      const text = await res.text();
      return new WebResponse(res.status, res.headers, text);
    } catch (err) {
      // fetch rejects with the abort reason; make sure a timeout is reported as one.
      if (controller.signal.aborted && !req.signal?.aborted) throw controller.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async open(req: WireRequest): Promise<Response> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(timeoutReason(req.timeoutMs)), req.timeoutMs);
    const signal =
      req.signal === undefined ? controller.signal : AbortSignal.any([req.signal, controller.signal]);
    try {
      return await this.call(req, signal);
    } catch (err) {
      if (controller.signal.aborted && !req.signal?.aborted) throw controller.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {}
}
