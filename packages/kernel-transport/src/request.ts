/**
 * The shape of one logical call of the HTTP core. Kept apart from http-core.ts so that the core,
 * the per-call run (request-run.ts) and the signer all depend on it without depending on each
 * other (no import cycle).
 */
import type { RetryMode, RetryOptions } from "./retry.js";

/** HTTP methods the kernel API uses. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

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
  /**
   * Headers computed per attempt over the exact bytes (signatures, timestamps). May return a
   * promise (an asynchronous WebCrypto signature): the attempt is sent once it resolves.
   */
  readonly attemptHeaders?:
    | ((ctx: AttemptContext) => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>)
    | undefined;
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
