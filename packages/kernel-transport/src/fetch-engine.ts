/**
 * The fetch engine: ky over `fetch`. The default engine wherever undici's pool is not (browsers,
 * Deno, Bun, workers; see engine-web.ts), and on Node when a `fetch` is injected.
 */
import ky, { type KyInstance } from "ky";
import type { AttemptSink, Engine, FetchLike, WireRequest, WireResponse } from "./engine.js";

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

// Deno's fetch reports a refused connection or a failed DNS lookup only in its message (Node's and
// Bun's errors carry `code`s). Both happen before a byte of the request is written, so they get
// the codes the unsent-failure rule in errors.ts knows: a non-idempotent call may then be sent
// again after a kernel restart, exactly as on Node.
const CONNECT_FAILURES: ReadonlyArray<readonly [RegExp, string]> = [
  [/client error \(Connect\): tcp connect error: Connection refused/, "ECONNREFUSED"],
  [/client error \(Connect\): dns error/, "ENOTFOUND"],
];

/** `err`, or for a connect failure known only by its message, an error with its `code`. */
export function withConnectCode(err: unknown): unknown {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code !== undefined) return err;
    for (const [pattern, code] of CONNECT_FAILURES) {
      if (pattern.test(e.message)) return Object.assign(new Error(e.message, { cause: err }), { code });
    }
  }
  return err;
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

  private call(req: WireRequest, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    return this.ky(this.origin + req.target, {
      method: req.method,
      headers,
      // A Uint8Array view, not the Buffer itself: some fetch polyfills reject Buffer subclasses.
      body:
        req.body === undefined ? null : new Uint8Array(req.body.buffer, req.body.byteOffset, req.body.length),
      signal,
    });
  }

  send(req: WireRequest, sink: AttemptSink): void {
    this.exchange(req, true).then(
      (res) => sink.onResponse(res as WireResponse),
      (err: unknown) => sink.onFailure(err),
    );
  }

  open(req: WireRequest): Promise<Response> {
    return this.exchange(req, false) as Promise<Response>;
  }

  /**
   * One attempt: wait for any pending (asynchronously signed) headers, then send with a timeout
   * that starts only now. `readBody` keeps the timeout running until the whole text is read; a
   * stream (`open`) is handed over once its headers arrive.
   */
  private async exchange(req: WireRequest, readBody: boolean): Promise<WireResponse | Response> {
    const headers =
      req.pendingHeaders === undefined ? req.headers : { ...req.headers, ...(await req.pendingHeaders) };
    if (req.signal?.aborted) throw req.signal.reason;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(timeoutReason(req.timeoutMs)), req.timeoutMs);
    const signal =
      req.signal === undefined ? controller.signal : AbortSignal.any([req.signal, controller.signal]);
    try {
      const res = await this.call(req, headers, signal);
      if (!readBody) return res;
      const text = await res.text();
      return new WebResponse(res.status, res.headers, text);
    } catch (err) {
      // fetch rejects with the abort reason; make sure a timeout is reported as one.
      if (controller.signal.aborted && !req.signal?.aborted) throw controller.signal.reason;
      throw withConnectCode(err);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {}
}
