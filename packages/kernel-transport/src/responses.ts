/** Reading kernel answers: error statuses to the error family, 2xx bodies to JSON. */
import { errorFromEnvelope, type RebunoError, UnexpectedResponse, ValidationError } from "@rebuno/protocol";
import type { WireResponse } from "./engine.js";

/** A 2xx response. */
export interface HttpResponse {
  readonly status: number;
  /** The whole body as text (`""` for 204). */
  readonly text: string;
  header(name: string): string | undefined;
}

// Server-requested backoff (Retry-After seconds on 429/503), kept beside the error so the retry
// loop can honour it without widening the public error classes.
const retryAfter = new WeakMap<object, number>();

const RETRY_AFTER_SECONDS = /^\d{1,6}$/;

function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || !RETRY_AFTER_SECONDS.test(value.trim())) return undefined;
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

/**
 * An answer that is not what `method path` returns: the real status and the start of the body,
 * never a `ValidationError` (that would blame the request).
 */
export function unexpectedResponse(
  res: HttpResponse,
  method: string,
  path: string,
  problem: string,
  cause?: unknown,
): UnexpectedResponse {
  const excerpt = res.text.slice(0, UnexpectedResponse.EXCERPT_CHARS);
  const shown = excerpt === "" ? "an empty body" : JSON.stringify(excerpt.slice(0, 80));
  return new UnexpectedResponse(
    `${method} ${path}: unexpected answer from the kernel (${res.status}, ${problem}): ${shown}`,
    { status: res.status, excerpt, cause },
  );
}

/**
 * Parse a 2xx body as JSON; `undefined` when empty. A garbled body is an `UnexpectedResponse`
 * naming `method path` (built only then: this runs on every answer).
 */
export function parseResponseJson(res: HttpResponse, method: string, path: string): unknown {
  if (res.text === "") return undefined;
  try {
    return JSON.parse(res.text);
  } catch (cause) {
    throw unexpectedResponse(res, method, path, "the body is not JSON", cause);
  }
}

/**
 * Parse a 2xx body with a model parser. The parsers report a wrong shape as `ValidationError`
 * (status 400); on an answer that is the kernel's fault, so it becomes an `UnexpectedResponse`.
 */
export function parseAnswer<T>(
  res: HttpResponse,
  method: string,
  path: string,
  model: (body: unknown) => T,
): T {
  const body = parseResponseJson(res, method, path);
  try {
    return model(body);
  } catch (cause) {
    if (!ValidationError.isInstance(cause)) throw cause;
    throw unexpectedResponse(res, method, path, cause.message, cause);
  }
}
