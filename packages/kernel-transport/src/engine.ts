/**
 * The two ways a request reaches the kernel. Both take fully prepared bytes and headers (the
 * signature is computed before an engine sees the request) and return the whole response text;
 * neither follows redirects, retries, or interprets status codes.
 *
 * - {@link UndiciEngine}: `undici` `Pool.request` over keep-alive sockets. The hot path for real
 *   kernels (http/https base URL, no injected `fetch`); see docs/design/transport.md for the
 *   measurements that chose it over ky + fetch.
 * - {@link FetchEngine}: ky over an injected `fetch` (in-process dev kernel, MSW, custom proxies).
 */
import ky, { type KyInstance } from "ky";
import { Pool } from "undici";

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

/** Something that sends {@link WireRequest}s. */
export interface Engine {
  readonly name: "undici" | "fetch";
  send(request: WireRequest): Promise<WireResponse>;
  /** A streaming response (SSE); the timeout covers only the wait for headers. */
  open(request: WireRequest): Promise<Response>;
  close(): Promise<void>;
}

/** `fetch` as injected by callers; only the `Request` argument form is used. */
export type FetchLike = (request: Request) => Promise<Response>;

type NodeHeaders = Record<string, string | string[] | undefined>;

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

/**
 * Keep-alive `undici.Pool` for one origin. undici does not follow redirects in `request`, unrefs
 * idle sockets (an idle transport never holds the process open) and honours the server's
 * `Keep-Alive: timeout` hint, which avoids most writes into a socket the server already closed.
 */
export class UndiciEngine implements Engine {
  readonly name = "undici" as const;
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly fallback: FetchEngine;

  constructor(origin: string, connections: number) {
    this.origin = origin;
    this.pool = new Pool(origin, { connections, pipelining: 1 });
    this.fallback = new FetchEngine(origin, (r) => fetch(r));
  }

  async send(req: WireRequest): Promise<WireResponse> {
    // headersTimeout bounds the wait for the answer, bodyTimeout every gap while it streams in:
    // for the small JSON bodies the kernel sends that is the per-attempt timeout.
    const res = await this.pool.request({
      origin: this.origin,
      path: req.target,
      method: req.method as "GET",
      headers: req.headers,
      body: req.body ?? null,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
      signal: req.signal ?? null,
    });
    const text = await res.body.text();
    return new NodeResponse(res.statusCode, res.headers, text);
  }

  // Streams are cold paths and callers want a Web `Response`; the global fetch gives one.
  open(req: WireRequest): Promise<Response> {
    return this.fallback.open(req);
  }

  close(): Promise<void> {
    return this.pool.close();
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

  async send(req: WireRequest): Promise<WireResponse> {
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
