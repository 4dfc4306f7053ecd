import { ConfigurationError } from "@rebuno/protocol";
import { type Engine, FetchEngine, type FetchLike, type WireRequest } from "./engine.js";
import { toTransportError } from "./errors.js";
import { consoleLogger, type TransportLogger } from "./logger.js";
import { RequestRun, type RunHooks, type RunHost } from "./request-run.js";
import { errorFromResponse, type HttpResponse, parseResponseJson, retryAfterMs } from "./responses.js";
import { type RetryMode, type RetryOptions, resolveRetryOptions, retryCall } from "./retry.js";
import { UndiciEngine } from "./undici-engine.js";
import { type BaseUrl, parseBaseUrl } from "./url.js";
import { userAgentHeader } from "./version.js";

/** Default per-attempt timeout: the kernel's own handlers may hold a request up to 30 s. */
export const DEFAULT_TIMEOUT_MS = 35_000;

/** HTTP methods the kernel API uses. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Options for {@link createHttpCore}. */
export interface HttpCoreOptions {
  /** Kernel base URL, optionally with a path prefix (`https://gw.example/rebuno`). */
  readonly baseUrl: string;
  /**
   * Send through this `fetch` instead of the built-in keep-alive undici pool (in-process dev
   * kernel, MSW, a proxy-aware fetch). Required for non-http(s) base URLs.
   */
  readonly fetch?: FetchLike | undefined;
  /** Per-attempt timeout in ms (default 35 000). */
  readonly timeoutMs?: number | undefined;
  /** Product token(s) put before ours in `User-Agent`, e.g. `rebuno-client/0.1.0`. */
  readonly userAgent?: string | undefined;
  /** Headers sent on every request (e.g. `Authorization: Bearer …`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Default retry budget for retryable calls. */
  readonly retry?: Partial<RetryOptions> | undefined;
  /** Where retries are reported (default: console with a `rebuno:` prefix). */
  readonly logger?: TransportLogger | undefined;
  /** Max sockets to the kernel for the undici pool (default 64). */
  readonly connections?: number | undefined;
}

/** What a per-attempt header hook sees: exactly the bytes and target about to be sent. */
export interface AttemptContext {
  readonly method: HttpMethod;
  /** Request target as on the request line, path prefix included. */
  readonly target: string;
  /** Body bytes as sent (empty when there is no body). */
  readonly body: Uint8Array;
  /** 1 for the first try. */
  readonly attempt: number;
}

/** One logical call; the core may send it several times (see `retry`). */
export interface HttpRequest {
  readonly method: HttpMethod;
  /** Path below the base URL, already escaped, with any query: `/v0/executions/abc?x=1`. */
  readonly path: string;
  /** Exact body bytes; a string is sent as UTF-8. `content-type: application/json` is added. */
  readonly body?: string | Uint8Array | undefined;
  /** Extra headers for every attempt. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Headers computed per attempt over the exact bytes (signatures, timestamps). */
  readonly attemptHeaders?: ((ctx: AttemptContext) => Readonly<Record<string, string>>) | undefined;
  /** Retry rule; default `"idempotent"` for GET and `"never"` otherwise. */
  readonly retry?: RetryMode | undefined;
  /** Overrides the core's retry budget for this call. */
  readonly retryOptions?: Partial<RetryOptions> | undefined;
  /** No retry starts after this many ms since the first attempt. */
  readonly budgetMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Per-attempt timeout (default: the core's). */
  readonly timeoutMs?: number | undefined;
}

/**
 * Shared HTTP core of the agent transport and `@rebuno/client`: base URL with path prefix, a
 * keep-alive undici pool (or an injected fetch through ky), per-attempt timeouts, `User-Agent`,
 * `redirect: manual`, status ≥ 300 mapped through `errorFromEnvelope`, transport failures mapped
 * to `NetworkError`/`TimeoutError` with `cause`, and the retry rules of {@link retryCall}.
 */
export interface HttpCore {
  readonly baseUrl: BaseUrl;
  /** `"undici"` (built-in pool) or `"fetch"` (injected fetch via ky). */
  readonly engine: "undici" | "fetch";
  readonly timeoutMs: number;
  /** The request target for `path`: base path prefix + `path`. This is what gets signed. */
  target(path: string): string;
  /** Send a call (retrying per its rule); resolves with a 2xx/1xx response, else throws. */
  request(request: HttpRequest): Promise<HttpResponse>;
  /** {@link request}, then parse the body as JSON (`undefined` for an empty body). */
  requestJson(request: HttpRequest): Promise<unknown>;
  /**
   * Open a streaming response (e.g. SSE). Resolves once headers arrive (the timeout covers only
   * that wait); status ≥ 300 throws the mapped error. The caller must consume or cancel the body.
   */
  open(request: HttpRequest): Promise<Response>;
  /** Close idle sockets; later requests fail. */
  close(): Promise<void>;
}

const EMPTY = new Uint8Array(0);

function toBytes(body: string | Uint8Array | undefined): Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string") return body === "" ? undefined : Buffer.from(body, "utf8");
  if (body.length === 0) return undefined;
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length);
}

const identity = (res: HttpResponse): HttpResponse => res;

/**
 * The core behind {@link createHttpCore}. The agent transport uses {@link Core.run} directly, so
 * parsing and error mapping happen before the call's one promise settles.
 */
export class Core implements HttpCore, RunHost {
  readonly baseUrl: BaseUrl;
  readonly engine: "undici" | "fetch";
  readonly timeoutMs: number;
  readonly sender: Engine;
  readonly logger: TransportLogger;
  private readonly userAgent: string;
  private readonly staticHeaders: Readonly<Record<string, string>> | undefined;
  private readonly retryDefaults: RetryOptions;

  constructor(options: HttpCoreOptions) {
    this.baseUrl = parseBaseUrl(options.baseUrl);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs))
      throw new ConfigurationError("timeoutMs must be > 0");
    this.timeoutMs = timeoutMs;
    this.userAgent = userAgentHeader(options.userAgent);
    this.staticHeaders = options.headers;
    this.retryDefaults = resolveRetryOptions(options.retry);
    this.logger = options.logger ?? consoleLogger;
    const isHttp = this.baseUrl.protocol === "http:" || this.baseUrl.protocol === "https:";
    if (options.fetch !== undefined) {
      this.sender = new FetchEngine(this.baseUrl.origin, options.fetch);
    } else if (isHttp) {
      this.sender = new UndiciEngine(this.baseUrl.origin, options.connections ?? 64);
    } else {
      throw new ConfigurationError(
        `kernel base URL ${this.baseUrl.href} is not http(s); pass a custom fetch to reach it`,
      );
    }
    this.engine = this.sender.name;
  }

  target(path: string): string {
    return this.baseUrl.pathPrefix + path;
  }

  wire(req: HttpRequest, target: string, body: Buffer | undefined, attempt: number): WireRequest {
    const headers: Record<string, string> = { "user-agent": this.userAgent };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.staticHeaders !== undefined) Object.assign(headers, this.staticHeaders);
    if (req.headers !== undefined) Object.assign(headers, req.headers);
    if (req.attemptHeaders !== undefined) {
      // Computed per attempt, after the bytes are final: the signature covers exactly what is sent.
      Object.assign(
        headers,
        req.attemptHeaders({ method: req.method, target, body: body ?? EMPTY, attempt }),
      );
    }
    return {
      method: req.method,
      target,
      headers,
      body,
      timeoutMs: req.timeoutMs ?? this.timeoutMs,
      signal: req.signal,
    };
  }

  private retryOptions(req: HttpRequest): RetryOptions {
    return req.retryOptions === undefined
      ? this.retryDefaults
      : resolveRetryOptions(this.retryDefaults, req.retryOptions);
  }

  /**
   * Send a call, retrying per its rule; `hooks.parse` turns the 2xx answer into the value and
   * `hooks.fail` maps the final error. One promise per call, however many attempts.
   */
  run<T>(req: HttpRequest, hooks: RunHooks<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const mode = req.retry ?? (req.method === "GET" ? "idempotent" : "never");
      const target = this.baseUrl.pathPrefix + req.path;
      const body = toBytes(req.body);
      new RequestRun(this, req, target, body, mode, this.retryOptions(req), hooks, resolve, reject).start();
    });
  }

  request(req: HttpRequest): Promise<HttpResponse> {
    return this.run(req, { parse: identity });
  }

  requestJson(req: HttpRequest): Promise<unknown> {
    return this.run(req, { parse: (res) => parseResponseJson(res, req.method, req.path) });
  }

  // Streams are cold paths: the promise-based retry loop is fine here.
  open(req: HttpRequest): Promise<Response> {
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    const target = this.baseUrl.pathPrefix + req.path;
    const body = toBytes(req.body);
    const mode: RetryMode = req.retry ?? (req.method === "GET" ? "idempotent" : "never");
    return retryCall(
      async (attempt) => {
        const wire = this.wire(req, target, body, attempt);
        let res: Response;
        try {
          res = await this.sender.open(wire);
        } catch (err) {
          if (req.signal?.aborted) throw req.signal.reason ?? err;
          throw toTransportError(err, `${req.method} ${target}`, wire.timeoutMs);
        }
        if (res.status >= 300) {
          const text = await res.text().catch(() => "");
          throw errorFromResponse({
            status: res.status,
            text,
            header: (n) => res.headers.get(n) ?? undefined,
          });
        }
        return res;
      },
      {
        mode,
        retry: this.retryOptions(req),
        signal: req.signal,
        budgetMs: req.budgetMs,
        retryAfterMs,
        onRetry: (e) =>
          this.logger.warn(`retrying ${req.method} ${req.path} (attempt ${e.attempt})`, {
            delayMs: Math.round(e.delayMs),
            error: e.error instanceof Error ? e.error.message : String(e.error),
          }),
      },
    );
  }

  close(): Promise<void> {
    return this.sender.close();
  }
}

/** Create the shared HTTP core (see {@link HttpCore}). */
export function createHttpCore(options: HttpCoreOptions): HttpCore {
  return new Core(options);
}
