import { NetworkError, RebunoError, TimeoutError } from "@rebuno/protocol";

/**
 * A step submission (`POST /v0/executions/{id}/steps`) failed in a way that leaves its outcome
 * unknown: the connection broke or timed out after the request was sent, a gateway answered
 * 5xx, or the 2xx answer could not be read. The kernel may already have counted the occurrence, so
 * re-sending would compute a *different* step id and could run an effect twice (docs/protocol.md §5.3).
 *
 * What to do: end this dispatch attempt without completing or failing the execution and stop
 * heartbeating (`LeaseKeeper.abandon`). The lease then expires, the kernel redelivers under a new
 * attempt, occurrence counters restart at zero and every step replays by id.
 * `retryable` is `false`: the *same call* must not be repeated.
 */
export class SubmissionOutcomeUnknown extends RebunoError {
  static {
    SubmissionOutcomeUnknown.prototype.name = "SubmissionOutcomeUnknown";
  }
  /** The execution whose submission is in doubt. */
  readonly executionId: string;

  constructor(executionId: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    const status = (cause as { status?: unknown } | undefined)?.status;
    super(
      `step submission for execution ${executionId} has an unknown outcome (${why}); ` +
        "ending this dispatch attempt so the kernel redelivers it",
      {
        code: "submission_outcome_unknown",
        cause,
        retryable: false,
        status: typeof status === "number" ? status : undefined,
      },
    );
    this.executionId = executionId;
  }
}

// Error codes that can only come from establishing a connection: the request never left this
// process, so even a non-idempotent request may be sent again.
const UNSENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"]);

function codesOf(err: unknown, out: string[], depth: number): void {
  if (depth > 6 || typeof err !== "object" || err === null) return;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") out.push(code);
  // Node's happy-eyeballs connect failures are AggregateErrors whose members carry the codes.
  const members = (err as { errors?: unknown }).errors;
  if (Array.isArray(members)) for (const m of members) codesOf(m, out, depth + 1);
  codesOf((err as { cause?: unknown }).cause, out, depth + 1);
}

/** All `code`s along an error's `cause` chain (and AggregateError members). */
export function errorCodes(err: unknown): string[] {
  const out: string[] = [];
  codesOf(err, out, 0);
  return out;
}

/**
 * True when the failure proves the request was never written to a socket (connection refused,
 * DNS failure, connect timeout). Only then may a non-idempotent request be sent again.
 */
export function isUnsentFailure(err: unknown): boolean {
  const codes = errorCodes(err).filter((c) => c !== "network_error");
  return codes.length > 0 && codes.every((c) => UNSENT_CODES.has(c));
}

/** True when a low-level error is a timeout (undici header/body timeouts, socket ETIMEDOUT). */
export function isTimeoutCause(err: unknown): boolean {
  if (typeof err === "object" && err !== null && (err as { name?: unknown }).name === "TimeoutError")
    return true;
  return errorCodes(err).some((c) => TIMEOUT_CODES.has(c));
}

/**
 * Wrap a low-level failure (no HTTP answer) into the protocol's transport errors, keeping the
 * original as `cause`. Errors already in the Rebuno family pass through unchanged.
 */
export function toTransportError(err: unknown, what: string, timeoutMs: number): RebunoError {
  if (RebunoError.isInstance(err)) return err;
  if (isTimeoutCause(err)) {
    return new TimeoutError(`${what} timed out after ${timeoutMs} ms`, { cause: err });
  }
  const reason = err instanceof Error ? describe(err) : String(err);
  return new NetworkError(`${what} failed: ${reason}`, { cause: err });
}

// `fetch failed` alone says nothing; show the first coded cause too.
function describe(err: Error): string {
  const codes = errorCodes(err);
  const msg = err.message || err.name;
  return codes.length > 0 && !msg.includes(codes[0]!) ? `${msg} (${codes[0]})` : msg;
}
