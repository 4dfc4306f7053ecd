import { ConfigurationError, errorFromEnvelope, KernelError, type RebunoError } from "@rebuno/protocol";
import {
  type Engine,
  FetchEngine,
  type FetchLike,
  UndiciEngine,
  type WireRequest,
  type WireResponse,
} from "./engine.js";
import { toTransportError } from "./errors.js";
import { consoleLogger, type TransportLogger } from "./logger.js";
import { type RetryMode, type RetryOptions, resolveRetryOptions, retryCall } from "./retry.js";
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

/** A 2xx response. */
export interface HttpResponse {
  readonly status: number;
  /** The whole body as text (`""` for 204). */
  readonly text: string;
  header(name: string): string | undefined;
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

// Server-requested backoff (Retry-After seconds on 429/503), kept beside the error so the retry
// loop can honour it without widening the public error classes.
const retryAfter = new WeakMap<object, number>();

function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

/** `Retry-After` of a failed response, in ms, when the server sent one in seconds. */
export function retryAfterMs(error: unknown): number | undefined {
  return typeof error === "object" && error !== null ? retryAfter.get(error) : undefined;
}

/** Map a status ≥ 300 response to the error family (protocol `errorFromEnvelope`). */
export function errorFromResponse(res: WireResponse): RebunoError {
  const err = errorFromEnvelope(res.status, res.text, res.text);
  const hint = parseRetryAfter(res.header("retry-after"));
  if (hint !== undefined) retryAfter.set(err, hint);
  return err;
}

/** Parse a 2xx body as JSON; `undefined` when empty. A garbled body is a `KernelError`. */
export function parseResponseJson(res: HttpResponse, what: string): unknown {
  if (res.text === "") return undefined;
  try {
    return JSON.parse(res.text);
  } catch (cause) {
    throw new KernelError(`${what}: the kernel answered ${res.status} with a body that is not JSON`, {
      status: res.status,
      code: "invalid_response",
      cause,
      details: res.text.slice(0, 200),
    });
  }
}

function toBytes(body: string | Uint8Array | undefined): Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string") return body === "" ? undefined : Buffer.from(body, "utf8");
  if (body.length === 0) return undefined;
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length);
}

class Core implements HttpCore {
  readonly baseUrl: BaseUrl;
  readonly engine: "undici" | "fetch";
  readonly timeoutMs: number;
  private readonly sender: Engine;
  private readonly userAgent: string;
  private readonly staticHeaders: Readonly<Record<string, string>> | undefined;
  private readonly retryDefaults: RetryOptions;
  private readonly logger: TransportLogger;

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

  private wire(req: HttpRequest, target: string, body: Buffer | undefined, attempt: number): WireRequest {
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

  private async once(req: HttpRequest, target: string, body: Buffer | undefined, attempt: number) {
    const wire = this.wire(req, target, body, attempt);
    let res: WireResponse;
    try {
      res = await this.sender.send(wire);
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason ?? err;
      throw toTransportError(err, `${req.method} ${target}`, wire.timeoutMs);
    }
    if (res.status >= 300) throw errorFromResponse(res);
    return res;
  }

  private retrying<T>(req: HttpRequest, run: (attempt: number) => Promise<T>): Promise<T> {
    const mode = req.retry ?? (req.method === "GET" ? "idempotent" : "never");
    if (mode === "never") return run(1);
    return retryCall(run, {
      mode,
      retry:
        req.retryOptions === undefined ? this.retryDefaults : { ...this.retryDefaults, ...req.retryOptions },
      signal: req.signal,
      budgetMs: req.budgetMs,
      retryAfterMs,
      onRetry: (e) =>
        this.logger.warn(`retrying ${req.method} ${req.path} (attempt ${e.attempt})`, {
          delayMs: Math.round(e.delayMs),
          error: e.error instanceof Error ? e.error.message : String(e.error),
        }),
    });
  }

  request(req: HttpRequest): Promise<HttpResponse> {
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    const target = this.baseUrl.pathPrefix + req.path;
    const body = toBytes(req.body);
    return this.retrying(req, (attempt) => this.once(req, target, body, attempt));
  }

  async requestJson(req: HttpRequest): Promise<unknown> {
    return parseResponseJson(await this.request(req), `${req.method} ${req.path}`);
  }

  open(req: HttpRequest): Promise<Response> {
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    const target = this.baseUrl.pathPrefix + req.path;
    const body = toBytes(req.body);
    return this.retrying(req, async (attempt) => {
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
        throw errorFromResponse({ status: res.status, text, header: (n) => res.headers.get(n) ?? undefined });
      }
      return res;
    });
  }

  close(): Promise<void> {
    return this.sender.close();
  }
}

/** Create the shared HTTP core (see {@link HttpCore}). */
export function createHttpCore(options: HttpCoreOptions): HttpCore {
  return new Core(options);
}
