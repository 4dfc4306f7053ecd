/** Reading kernel answers: error statuses to the error family, 2xx bodies to JSON. */
import { errorFromEnvelope, KernelError, type RebunoError } from "@rebuno/protocol";
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
 * Parse a 2xx body as JSON; `undefined` when empty. A garbled body is a `KernelError` naming
 * `method path` (built only then: this runs on every answer).
 */
export function parseResponseJson(res: HttpResponse, method: string, path: string): unknown {
  if (res.text === "") return undefined;
  try {
    return JSON.parse(res.text);
  } catch (cause) {
    throw new KernelError(
      `${method} ${path}: the kernel answered ${res.status} with a body that is not JSON`,
      {
        status: res.status,
        code: "invalid_response",
        cause,
        details: res.text.slice(0, 200),
      },
    );
  }
}
