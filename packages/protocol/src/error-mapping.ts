import {
  ConflictError,
  ForbiddenError,
  InternalError,
  KernelError,
  type KernelErrorSubclassOptions,
  LeaseSuperseded,
  NotFoundError,
  PolicyError,
  RateLimited,
  Terminated,
  ToolError,
  UnauthorizedError,
  ValidationError,
} from "./errors.js";

/** Wire error codes with a dedicated class (docs/protocol.md §2, plus the SDK-side `policy_denied`). */
export type KernelErrorCode =
  | "validation_error"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "lease_superseded"
  | "execution_terminal"
  | "policy_denied"
  | "internal_error";

/** Constructor shape shared by the fixed-code kernel error classes. */
export type KernelErrorClass = new (message?: string, options?: KernelErrorSubclassOptions) => KernelError;

/** The one code → class table. Codes not listed here become a plain {@link KernelError}. */
export const ERROR_CODE_CLASSES: Readonly<Record<KernelErrorCode, KernelErrorClass>> = Object.freeze({
  validation_error: ValidationError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  conflict: ConflictError,
  lease_superseded: LeaseSuperseded,
  execution_terminal: Terminated,
  policy_denied: PolicyError,
  internal_error: InternalError,
});

// Used only when the body carries no envelope (a proxy page, an empty 502…).
function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return "validation_error";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    default:
      return status >= 500 ? "internal_error" : "unknown";
  }
}

const MAX_FALLBACK_CHARS = 300;

function trimFallback(fallbackText: string | undefined): string | undefined {
  const text = fallbackText?.trim() ?? "";
  if (text === "") return undefined;
  return text.length > MAX_FALLBACK_CHARS ? `${text.slice(0, MAX_FALLBACK_CHARS)}…` : text;
}

function asEnvelope(body: unknown): Record<string, unknown> | undefined {
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return typeof body === "object" && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : undefined;
}

/**
 * Map an error response to the error family. `body` is the parsed JSON (or the raw text) of the
 * response; `fallbackText` is used as the message when there is no envelope (e.g. an HTML proxy
 * page). Known codes map through {@link ERROR_CODE_CLASSES}; unknown codes give a plain
 * `KernelError` with that code; a body without a code is classified by HTTP status.
 */
export function errorFromEnvelope(status: number, body: unknown, fallbackText?: string): KernelError {
  const env = asEnvelope(body);
  const rawCode = env !== undefined && typeof env.code === "string" && env.code !== "" ? env.code : undefined;
  const code = rawCode ?? codeForStatus(status);
  // Message: the envelope's; else (known class) the class default; else the response text
  // when there was no JSON envelope at all; else `HTTP <status>`.
  let message: string | undefined;
  if (env !== undefined) {
    message = typeof env.message === "string" && env.message !== "" ? env.message : undefined;
    if (message === undefined && rawCode === undefined) message = `HTTP ${status}`;
  } else {
    message = trimFallback(fallbackText ?? (typeof body === "string" ? body : undefined)) ?? `HTTP ${status}`;
  }
  const details = env?.details;
  const options = details === undefined || details === null ? { status } : { status, details };

  if (code === "policy_denied") {
    const ruleId = typeof env?.rule_id === "string" ? env.rule_id : undefined;
    const reason = typeof env?.reason === "string" ? env.reason : undefined;
    return new PolicyError(message, { ...options, ruleId, reason });
  }
  const cls = Object.hasOwn(ERROR_CODE_CLASSES, code)
    ? ERROR_CODE_CLASSES[code as KernelErrorCode]
    : undefined;
  if (cls !== undefined) return new cls(message, options);
  return new KernelError(message ?? `HTTP ${status}`, { ...options, code });
}

// Kernel reasons are snake_case tokens; prose reasons get the `policy_denied:` prefix.
const TOKEN = /^[a-z0-9_]+$/;

function errorClassName(err: Error): string {
  const ctor = (err as { constructor?: { name?: unknown } }).constructor;
  const ctorName = typeof ctor?.name === "string" ? ctor.name : "";
  if ((err.name === "Error" || err.name === "") && ctorName !== "") return ctorName;
  return err.name || ctorName || "Error";
}

// Duck-typed so errors from other realms (vm, workers) are still described by class.
function isErrorLike(value: unknown): value is Error {
  return (
    value instanceof Error ||
    (typeof value === "object" &&
      value !== null &&
      typeof (value as Error).message === "string" &&
      typeof (value as Error).name === "string")
  );
}

function describeNonError(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    const text = JSON.stringify(value);
    if (text !== undefined) return text;
  } catch {
    // fall through to String()
  }
  return String(value);
}

/**
 * The `failure_reason` string an agent sends when its handler fails (docs/protocol.md §14.4). The text
 * before the first colon is a stable token:
 * - `PolicyError`: its reason when it is a token (`approval_timeout`), else `policy_denied: <reason>`;
 * - `RateLimited`: its reason (`rate_limit_exceeded`, `rate_limiter_unavailable`);
 * - `ToolError`: `tool_error: <toolId>: <message>`;
 * - anything else: `agent_error: <ClassName>: <message>` (`NonError` for thrown non-errors).
 */
export function failureReason(err: unknown): string {
  if (PolicyError.isInstance(err)) {
    const reason = err.reason || err.message || "policy_denied";
    return TOKEN.test(reason) ? reason : `policy_denied: ${reason}`;
  }
  if (RateLimited.isInstance(err)) return err.reason;
  if (ToolError.isInstance(err)) return `tool_error: ${err.message}`;
  if (isErrorLike(err)) return `agent_error: ${errorClassName(err)}: ${err.message}`;
  return `agent_error: NonError: ${describeNonError(err)}`;
}
