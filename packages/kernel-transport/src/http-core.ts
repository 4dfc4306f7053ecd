import { ConfigurationError } from "@rebuno/protocol";
// `#engine` (package.json "imports"): undici's pool on Node, `fetch` everywhere else.
import { bodyBytes, createDefaultEngine } from "#engine";
import type { Engine, FetchLike, WireRequest } from "./engine.js";
import { toTransportError } from "./errors.js";
import { FetchEngine } from "./fetch-engine.js";
import { consoleLogger, type TransportLogger } from "./logger.js";
import type { HttpRequest } from "./request.js";
import { RequestRun, type RunHooks, type RunHost } from "./request-run.js";
import {
  errorFromResponse,
  type HttpResponse,
  parseAnswer,
  parseResponseJson,
  retryAfterMs,
} from "./responses.js";
import { type RetryMode, type RetryOptions, resolveRetryOptions, retryCall } from "./retry.js";
import { type BaseUrl, parseBaseUrl } from "./url.js";
import { userAgentHeader } from "./version.js";

/** Default per-attempt timeout: the kernel's own handlers may hold a request up to 30 s. */
export const DEFAULT_TIMEOUT_MS = 35_000;

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
   * {@link request}, then the JSON body through `model` (a protocol parser such as
   * `parseExecution`). A body of the wrong shape is an `UnexpectedResponse` with the real status
   * and a body excerpt, not the parser's `ValidationError` (which would blame the request).
   */
  requestJson<T>(request: HttpRequest, model: (body: unknown) => T): Promise<T>;
  /**
   * Open a streaming response (e.g. SSE). Resolves once headers arrive (the timeout covers only
   * that wait); status ≥ 300 throws the mapped error. The caller must consume or cancel the body.
   */
  open(request: HttpRequest): Promise<Response>;
  /** Close idle sockets; later requests fail. */
  close(): Promise<void>;
}

const EMPTY = new Uint8Array(0);

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
      this.sender = createDefaultEngine(this.baseUrl.origin, options.connections ?? 64);
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
    let pendingHeaders: Promise<Readonly<Record<string, string>>> | undefined;
    if (req.attemptHeaders !== undefined) {
      // Computed per attempt, after the bytes are final: the signature covers exactly what is sent.
      // A WebCrypto signature (fetch engine) is a promise: the engine sends once it is ready.
      const extra = req.attemptHeaders({ method: req.method, target, body: body ?? EMPTY, attempt });
      if (extra instanceof Promise) pendingHeaders = extra;
      else Object.assign(headers, extra);
    }
    return {
      method: req.method,
      target,
      headers,
      pendingHeaders,
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
      const body = bodyBytes(req.body);
      new RequestRun(this, req, target, body, mode, this.retryOptions(req), hooks, resolve, reject).start();
    });
  }

  request(req: HttpRequest): Promise<HttpResponse> {
    return this.run(req, { parse: identity });
  }

  requestJson(req: HttpRequest): Promise<unknown>;
  requestJson<T>(req: HttpRequest, model: (body: unknown) => T): Promise<T>;
  requestJson<T>(req: HttpRequest, model?: (body: unknown) => T): Promise<unknown> {
    if (model !== undefined)
      return this.run(req, { parse: (res) => parseAnswer(res, req.method, req.path, model) });
    return this.run(req, { parse: (res) => parseResponseJson(res, req.method, req.path) });
  }

  // Streams are cold paths: the promise-based retry loop is fine here.
  open(req: HttpRequest): Promise<Response> {
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    const target = this.baseUrl.pathPrefix + req.path;
    const body = bodyBytes(req.body);
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
