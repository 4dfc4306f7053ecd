/**
 * The two ways a request reaches the kernel. Both take fully prepared bytes and headers and report
 * the whole response text; neither follows redirects, retries, or interprets status codes.
 *
 * - `UndiciEngine` (undici-engine.ts): `undici` `Pool.dispatch` over keep-alive sockets. The hot
 *   path for real kernels on Node (http/https base URL, no injected `fetch`); see
 *   docs/design/transport.md §2 for the measurements behind it.
 * - `FetchEngine` (fetch-engine.ts): ky over `fetch`. The default everywhere else (browsers, Deno,
 *   Bun, workers), and on Node whenever a `fetch` is injected (in-process dev kernel, MSW, proxies).
 *
 * Which one a bare base URL gets is decided by the `#engine` import (package.json "imports"
 * conditions): engine-node.ts on Node, engine-web.ts elsewhere.
 */

/** A request ready for the wire. */
export interface WireRequest {
  readonly method: string;
  /** Request target exactly as on the request line (path prefix + escaped path + query). */
  readonly target: string;
  readonly headers: Record<string, string>;
  /**
   * Headers still being computed (a WebCrypto signature is asynchronous). The engine sends once
   * they are ready, merged over `headers`; the per-attempt timeout starts after that.
   */
  readonly pendingHeaders?: Promise<Readonly<Record<string, string>>> | undefined;
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
