/**
 * The single Rebuno error family. Every class sets `name` on its prototype (so stack traces and
 * `String(err)` show it even after minification), carries a stable `code`, an optional HTTP
 * `status`, optional `details`, a `cause` when it wraps something, and a meaningful `retryable`.
 *
 * `instanceof` and `X.isInstance(value)` work across duplicate installs of this package: a
 * `Symbol.for("rebuno.error")` brand marks the family and class membership is decided by the
 * prototype names along the chain.
 */

const ERROR_BRAND: unique symbol = Symbol.for("rebuno.error") as never;

/** Options accepted by every error constructor. */
export interface RebunoErrorOptions {
  /** Stable machine-readable code (wire code for kernel errors). */
  readonly code?: string | undefined;
  /** HTTP status when the error came from (or maps to) an HTTP response. */
  readonly status?: number | undefined;
  /** Extra context: the envelope `details` string for kernel errors, anything for local errors. */
  readonly details?: unknown;
  /** The underlying error, if any. */
  readonly cause?: unknown;
  /** Override whether retrying the same operation may succeed. */
  readonly retryable?: boolean | undefined;
}

function hasOwnName(proto: object, name: string): boolean {
  const d = Object.getOwnPropertyDescriptor(proto, "name");
  return d !== undefined && d.value === name;
}

/** Base class of every error thrown by Rebuno packages. */
export class RebunoError extends Error {
  static {
    Object.defineProperty(RebunoError.prototype, ERROR_BRAND, { value: true });
    RebunoError.prototype.name = "RebunoError";
  }

  /** Stable machine-readable code. */
  readonly code: string;
  /** HTTP status, when there is one. */
  readonly status?: number;
  /** Extra context (envelope `details` for kernel errors). */
  readonly details?: unknown;
  /** True when repeating the same operation later may succeed. */
  readonly retryable: boolean;

  constructor(message: string, options: RebunoErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? "rebuno_error";
    if (options.status !== undefined) this.status = options.status;
    if (options.details !== undefined) this.details = options.details;
    this.retryable = options.retryable ?? false;
  }

  /**
   * True when `value` is an instance of this class (or a subclass), also when it was created by a
   * different copy of `@rebuno/protocol`.
   */
  static isInstance<T extends abstract new (...args: never[]) => RebunoError>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    if (typeof value !== "object" || value === null) return false;
    if ((value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] !== true) return false;
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class the check is called on.
    const wanted = (this.prototype as { name: string }).name;
    for (let p = Object.getPrototypeOf(value); p !== null; p = Object.getPrototypeOf(p)) {
      if (hasOwnName(p, wanted)) return true;
    }
    return false;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the right-hand side of `instanceof`.
    return RebunoError.isInstance.call(this as never, value);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernel errors (the kernel answered with an error envelope)
// ---------------------------------------------------------------------------------------------

/** Options for {@link KernelError}; `status` and `code` come from the HTTP response. */
export interface KernelErrorOptions extends RebunoErrorOptions {
  readonly status: number;
  readonly code: string;
}

/** Options for the fixed-code kernel error subclasses (`status` may be overridden). */
export type KernelErrorSubclassOptions = Omit<RebunoErrorOptions, "code">;

/**
 * The kernel answered with an error envelope `{code, message, details?}`. Unknown codes surface as
 * a plain `KernelError`; known codes map to the subclasses below (see `ERROR_CODE_CLASSES`).
 */
export class KernelError extends RebunoError {
  static {
    KernelError.prototype.name = "KernelError";
  }
  declare readonly status: number;

  constructor(message: string, options: KernelErrorOptions);
  /** The official SDK's `new APIError(message, code, statusCode)`. */
  constructor(message: string, code: string, statusCode: number);
  constructor(message: string, options: KernelErrorOptions | string, statusCode?: number) {
    const o: KernelErrorOptions =
      typeof options === "string" ? { code: options, status: statusCode ?? 500 } : options;
    super(message, { ...o, retryable: o.retryable ?? o.status >= 500 });
  }

  /** The HTTP status under the official SDK's field name (same value as {@link status}). */
  get statusCode(): number {
    return this.status;
  }
}

/**
 * The official TypeScript SDK's name for a kernel error envelope: the same class as
 * {@link KernelError} (`catch (e) { if (e instanceof APIError) e.statusCode }` works unchanged).
 */
export const APIError = KernelError;
/** @see {@link KernelError} */
export type APIError = KernelError;

/** One validation problem (zod issues map onto this shape). */
export interface ValidationIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly code?: string;
}

/** Options for {@link ValidationError}. */
export interface ValidationErrorOptions extends KernelErrorSubclassOptions {
  /** Individual problems, for SDK-side input validation. */
  readonly issues?: readonly ValidationIssue[] | undefined;
}

/** 400 `validation_error` from the kernel, or SDK-side validation of input. */
export class ValidationError extends KernelError {
  static {
    ValidationError.prototype.name = "ValidationError";
  }
  /** Individual problems (empty when the kernel reported the error). */
  readonly issues: readonly ValidationIssue[];

  constructor(message = "validation error", options: ValidationErrorOptions = {}) {
    super(message, { ...options, code: "validation_error", status: options.status ?? 400 });
    this.issues = options.issues ?? [];
  }
}

/** 401 `unauthorized`: missing/invalid bearer token or agent signature. */
export class UnauthorizedError extends KernelError {
  static {
    UnauthorizedError.prototype.name = "UnauthorizedError";
  }
  constructor(message = "unauthorized", options: KernelErrorSubclassOptions = {}) {
    super(message, { ...options, code: "unauthorized", status: options.status ?? 401 });
  }
}

/** 403 `forbidden`: scope missing, another agent's execution, or not an approver. */
export class ForbiddenError extends KernelError {
  static {
    ForbiddenError.prototype.name = "ForbiddenError";
  }
  constructor(message = "forbidden", options: KernelErrorSubclassOptions = {}) {
    super(message, { ...options, code: "forbidden", status: options.status ?? 403 });
  }
}

/** 404 `not_found`. */
export class NotFoundError extends KernelError {
  static {
    NotFoundError.prototype.name = "NotFoundError";
  }
  constructor(message = "not found", options: KernelErrorSubclassOptions = {}) {
    super(message, { ...options, code: "not_found", status: options.status ?? 404 });
  }
}

/** 409 `conflict` (approval not pending, terminal execution on cancel, resource mismatch…). */
export class ConflictError extends KernelError {
  static {
    ConflictError.prototype.name = "ConflictError";
  }
  constructor(message = "conflict", options: KernelErrorSubclassOptions = {}) {
    super(message, { ...options, code: "conflict", status: options.status ?? 409 });
  }
}

/** 409 `lease_superseded`: this dispatch attempt no longer owns the execution; stop quietly. */
export class LeaseSuperseded extends KernelError {
  static {
    LeaseSuperseded.prototype.name = "LeaseSuperseded";
  }
  constructor(message = "dispatch lease superseded", options: KernelErrorSubclassOptions = {}) {
    super(message, { ...options, code: "lease_superseded", status: options.status ?? 409 });
  }
}

/** Options for {@link PolicyError}. */
export interface PolicyErrorOptions extends KernelErrorSubclassOptions {
  /** Id of the rule that refused the step (`__indeterminate_retry`, `default`, …). */
  readonly ruleId?: string | undefined;
  /** Denial reason; defaults to the message. */
  readonly reason?: string | undefined;
}

/**
 * A step was refused by policy (or by a human, or by the kernel's indeterminate-retry guard).
 * `message` is the denial reason, so tools can render `<name> not allowed. reason: <message>`.
 */
export class PolicyError extends KernelError {
  static {
    PolicyError.prototype.name = "PolicyError";
  }
  readonly ruleId?: string;
  readonly reason: string;

  constructor(message?: string, options: PolicyErrorOptions = {}) {
    const reason = options.reason ?? message ?? "policy_denied";
    super(message ?? reason, { ...options, code: "policy_denied", status: options.status ?? 403 });
    this.reason = reason;
    if (options.ruleId !== undefined) this.ruleId = options.ruleId;
  }
}

/** 409 `execution_terminal`, or the `execution_terminal` decision: exit the handler cleanly. */
export class Terminated extends KernelError {
  static {
    Terminated.prototype.name = "Terminated";
  }
  constructor(message = "execution is terminal", options: KernelErrorSubclassOptions = {}) {
    super(message, { ...options, code: "execution_terminal", status: options.status ?? 409 });
  }
}

/** 500 `internal_error` (and envelope-less 5xx answers). Retryable. */
export class InternalError extends KernelError {
  static {
    InternalError.prototype.name = "InternalError";
  }
  constructor(message = "internal error", options: KernelErrorSubclassOptions = {}) {
    super(message, {
      ...options,
      code: "internal_error",
      status: options.status ?? 500,
      retryable: options.retryable ?? true,
    });
  }
}

/** Options for {@link UnexpectedResponse}. */
export interface UnexpectedResponseOptions extends Omit<RebunoErrorOptions, "code" | "status"> {
  /** The HTTP status the kernel (or something in front of it) really answered. */
  readonly status: number;
  /** The start of the body as received (at most {@link UnexpectedResponse.EXCERPT_CHARS} chars). */
  readonly excerpt: string;
}

/**
 * `invalid_response`: an answer that is not what the route returns, e.g. a 2xx whose body is not
 * JSON (a proxy's HTML page, a truncated body) or JSON of the wrong shape. `status` is the real
 * status, `excerpt` the start of the body. Not a `ValidationError`: the request was fine, the
 * answer was not. Not retryable (the kernel may have acted on the request).
 */
export class UnexpectedResponse extends KernelError {
  static {
    UnexpectedResponse.prototype.name = "UnexpectedResponse";
  }
  /** Longest body excerpt kept on the error. */
  static readonly EXCERPT_CHARS = 200;
  /** The start of the body as received. */
  readonly excerpt: string;
  constructor(message: string, options: UnexpectedResponseOptions) {
    const { excerpt, ...rest } = options;
    super(message, { ...rest, code: "invalid_response", retryable: rest.retryable ?? false });
    this.excerpt = excerpt.slice(0, UnexpectedResponse.EXCERPT_CHARS);
  }
}

// ---------------------------------------------------------------------------------------------
// Decisions and control flow (not HTTP errors)
// ---------------------------------------------------------------------------------------------

/** Options for {@link RateLimited}. */
export interface RateLimitedOptions extends Omit<RebunoErrorOptions, "code"> {
  /** `rate_limit_exceeded` or `rate_limiter_unavailable`. */
  readonly reason?: string | undefined;
}

/** The kernel answered the `rate_limited` decision. `message` equals `reason`. */
export class RateLimited extends RebunoError {
  static {
    RateLimited.prototype.name = "RateLimited";
  }
  readonly reason: string;

  constructor(reason = "rate_limit_exceeded", options: RateLimitedOptions = {}) {
    const r = options.reason ?? reason;
    super(r, { ...options, code: "rate_limited" });
    this.reason = r;
  }
}

/** Options for {@link Blocked}. */
export interface BlockedOptions extends Omit<RebunoErrorOptions, "code"> {
  /** Why (e.g. `rate_limit_exceeded` for a rate-limit park, `awaiting_steps` for a suspend). */
  readonly reason?: string | undefined;
  /** The pending approval the step waits on. */
  readonly approvalId?: string | undefined;
}

/** The execution stopped for now (approval, suspension, rate-limit park): end the handler. */
export class Blocked extends RebunoError {
  static {
    Blocked.prototype.name = "Blocked";
  }
  readonly reason?: string;
  readonly approvalId?: string;

  constructor(message = "step blocked", options: BlockedOptions = {}) {
    super(message, { ...options, code: "blocked" });
    if (options.reason !== undefined) this.reason = options.reason;
    if (options.approvalId !== undefined) this.approvalId = options.approvalId;
  }
}

// ---------------------------------------------------------------------------------------------
// Transport, tools, configuration
// ---------------------------------------------------------------------------------------------

/** The request never produced an HTTP answer. Retryable unless told otherwise. */
export class TransportError extends RebunoError {
  static {
    TransportError.prototype.name = "TransportError";
  }
  constructor(message: string, options: RebunoErrorOptions = {}) {
    super(message, {
      ...options,
      code: options.code ?? "transport_error",
      retryable: options.retryable ?? true,
    });
  }
}

/** Connection refused/reset, DNS failure, socket closed. Retryable. */
export class NetworkError extends TransportError {
  static {
    NetworkError.prototype.name = "NetworkError";
  }
  constructor(message = "network error", options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(message, { ...options, code: "network_error" });
  }
}

/** The request exceeded its time budget. Retryable. */
export class TimeoutError extends TransportError {
  static {
    TimeoutError.prototype.name = "TimeoutError";
  }
  constructor(message = "request timed out", options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(message, { ...options, code: "timeout" });
  }
}

/**
 * Why a recorded tool call failed, as {@link ToolError.reason}:
 * - `tool_failed`: the tool body threw (live, or replayed from the recorded failure);
 * - `indeterminate`: an `at_most_once` call was interrupted mid-body (crash, lost lease) and the
 *   kernel cannot know whether its effect happened;
 * - `denied`: policy (or a human, or the kernel's indeterminate-retry guard) refused the call and
 *   the tool was called directly from code (frameworks receive the denial as a string instead);
 * - `subagent_failed` / `subagent_cancelled`: the child execution started by `subagent()` failed
 *   or was cancelled (see {@link ToolError.childExecutionId} and {@link ToolError.childError}).
 */
export type ToolErrorReason =
  | "tool_failed"
  | "indeterminate"
  | "denied"
  | "subagent_failed"
  | "subagent_cancelled";

/** Options for {@link ToolError}. */
export interface ToolErrorOptions extends Omit<RebunoErrorOptions, "code"> {
  /** Default `tool_failed`. */
  readonly reason?: ToolErrorReason | undefined;
  readonly toolId?: string | undefined;
  readonly stepId?: string | undefined;
  /** For `denied`: the policy rule that refused the call. */
  readonly ruleId?: string | undefined;
  /** For `denied`: the denial reason (the rule's reason, the approver's rationale…). */
  readonly policyReason?: string | undefined;
  /** For `subagent_*`: the child execution's id. */
  readonly childExecutionId?: string | undefined;
  /** For `subagent_*`: the child's `failure_reason`. */
  readonly childError?: string | undefined;
}

/**
 * A recorded tool call failed: its body threw, its outcome is unknown, it was denied (direct
 * calls), or its subagent failed. `message` is `${toolId}: ${failure}` when a tool id is known;
 * the structured fields say the rest. A replayed failure has exactly the fields, message and
 * string of the first run (only `cause`, the live error, is not recorded).
 */
export class ToolError extends RebunoError {
  static {
    ToolError.prototype.name = "ToolError";
  }
  readonly reason: ToolErrorReason;
  readonly toolId?: string;
  readonly stepId?: string;
  /** The failure text without the `toolId: ` prefix: what the step recorded. */
  readonly failure: string;
  /** For `denied`: the rule that refused the call (`__indeterminate_retry` for a refused retry). */
  readonly ruleId?: string;
  /** For `denied`: the denial reason (what the LLM's denial string carries). */
  readonly policyReason?: string;
  /** For `subagent_*`: the child execution's id. */
  readonly childExecutionId?: string;
  /** For `subagent_*`: the child's `failure_reason` (absent for a cancelled child without one). */
  readonly childError?: string;

  constructor(message: string, options: ToolErrorOptions = {}) {
    const full = options.toolId ? `${options.toolId}: ${message}` : message;
    super(full, { ...options, code: "tool_error" });
    this.reason = options.reason ?? "tool_failed";
    this.failure = message;
    if (options.toolId !== undefined) this.toolId = options.toolId;
    if (options.stepId !== undefined) this.stepId = options.stepId;
    if (options.ruleId !== undefined) this.ruleId = options.ruleId;
    if (options.policyReason !== undefined) this.policyReason = options.policyReason;
    if (options.childExecutionId !== undefined) this.childExecutionId = options.childExecutionId;
    if (options.childError !== undefined) this.childError = options.childError;
  }
}

/**
 * Thrown by a resource driver's `create(checkpointRef)` when the checkpoint it was asked to
 * restore no longer exists (expired snapshot, deleted volume). It fails the resource setup, and so
 * the execution (`agent_error: CheckpointUnavailable: …`), instead of silently starting from an
 * empty environment.
 */
export class CheckpointUnavailable extends RebunoError {
  static {
    CheckpointUnavailable.prototype.name = "CheckpointUnavailable";
  }
  /** The checkpoint reference that could not be restored, when known. */
  readonly checkpointRef?: string;
  constructor(
    message = "checkpoint unavailable",
    options: Omit<RebunoErrorOptions, "code"> & { readonly checkpointRef?: string | undefined } = {},
  ) {
    super(message, { ...options, code: "checkpoint_unavailable" });
    if (options.checkpointRef !== undefined) this.checkpointRef = options.checkpointRef;
  }
}

/** Misuse found at definition or start-up: bad decorators, duplicate ids, missing secret. */
export class ConfigurationError extends RebunoError {
  static {
    ConfigurationError.prototype.name = "ConfigurationError";
  }
  constructor(message: string, options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(message, { ...options, code: "configuration_error" });
  }
}
