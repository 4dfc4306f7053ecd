/**
 * The transport-neutral request/response shapes of the kernel core. Both adapters (Web `fetch`
 * and `node:http`) translate to and from these, so the socket path never builds `Request` or
 * `Response` objects.
 */

/** Request headers: lowercase names; an array when the header appeared more than once. */
export type CoreHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** One HTTP request as the core sees it. */
export interface CoreRequest {
  /** Method as sent (`GET`, `POST`…). */
  readonly method: string;
  /** Request target exactly as on the request line: escaped path plus `?` and the raw query. */
  readonly target: string;
  readonly headers: CoreHeaders;
  /** Raw body bytes (the HMAC covers them byte-for-byte). */
  readonly body: Buffer | string;
}

/** Control of an open stream, held by the adapter. */
export interface CoreStreamControl {
  /** The client went away (or the adapter is closing): stop producing. */
  close(): void;
  /** The socket drained after `write` returned false: resume producing. */
  drain(): void;
}

/**
 * A streamed (SSE) body. `open` starts producing: `write` sends a chunk and returns false when
 * the socket is congested; `end` is called when the kernel ends the stream (on close).
 */
export interface CoreStream {
  open(write: (chunk: string) => boolean, end: () => void): CoreStreamControl;
}

/** A complete response (`body` is `""` for 204). */
export interface CoreBodyResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A streaming response (SSE). */
export interface CoreStreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly stream: CoreStream;
}

/** What the core answers. */
export type CoreResponse = CoreBodyResponse | CoreStreamResponse;

/** The kernel core: one call per request. */
export type CoreHandler = (request: CoreRequest) => Promise<CoreResponse>;

/** Returns a single header value; `undefined` when absent, the first value when repeated. */
export function headerValue(headers: CoreHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  return typeof v === "string" ? v : v[0];
}

/** How many times a header appeared. */
export function headerCount(headers: CoreHeaders, name: string): number {
  const v = headers[name];
  if (v === undefined) return 0;
  return typeof v === "string" ? 1 : v.length;
}
