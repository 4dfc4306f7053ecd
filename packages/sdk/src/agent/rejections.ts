/**
 * Webhook rejections: every request the agent refuses is logged (rate-limited per cause) and
 * counted, so a misconfigured secret or URL shows up as "401 bad_signature × 40" in the agent's
 * log instead of looking like "the kernel never calls me". Nothing from the request that could be
 * a secret is logged: no body, no signature, no header values; the target is cut short.
 */
import type { Logger } from "../runtime/logger.js";

/** Why the agent refused a webhook request. */
export type WebhookRejectionCause =
  /** Node's HTTP parser refused the request (bad request line, invalid header bytes, …). */
  | "malformed_request"
  /** The request target is not a path or a parsable absolute URL. */
  | "malformed_target"
  /** The headers exceeded the server's header size limit. */
  | "headers_too_large"
  /** The client did not send its headers or body within the server's timeouts. */
  | "request_timeout"
  /** The client closed the connection before the whole body arrived. */
  | "truncated_body"
  /** A path other than the webhook path (or `/healthz`). */
  | "not_found"
  /** The webhook path with a method other than `POST`. */
  | "method_not_allowed"
  /** A `Content-Type` other than JSON. */
  | "unsupported_media_type"
  /** A body over 1 MiB. */
  | "payload_too_large"
  /** No `Rebuno-Signature` header, or not in the `sha256=<hex>` form. */
  | "missing_signature"
  /** A signature that does not match the body under this agent's secret. */
  | "bad_signature"
  /** A signed body that is not a valid webhook payload. */
  | "invalid_body"
  /** A signed payload of the other kernel protocol generation than the one configured. */
  | "protocol_mismatch"
  /** A delivery for an execution that belongs to another agent. */
  | "wrong_agent"
  /** A delivery while the agent is closing. */
  | "agent_closing"
  /** The handler failed unexpectedly (a bug; answered 500). */
  | "internal_error";

/** Every cause, in a stable order (for counters and docs). */
export const WEBHOOK_REJECTION_CAUSES: readonly WebhookRejectionCause[] = [
  "malformed_request",
  "malformed_target",
  "headers_too_large",
  "request_timeout",
  "truncated_body",
  "not_found",
  "method_not_allowed",
  "unsupported_media_type",
  "payload_too_large",
  "missing_signature",
  "bad_signature",
  "invalid_body",
  "protocol_mismatch",
  "wrong_agent",
  "agent_closing",
  "internal_error",
];

/** One refused webhook request, as logged and as passed to `onRejectedWebhook`. */
export interface WebhookRejection {
  readonly cause: WebhookRejectionCause;
  /** The status answered (`0` when the connection was gone and nothing could be answered). */
  readonly status: number;
  /** What was wrong, in words (never contains the secret or the body). */
  readonly message: string;
  readonly method?: string | undefined;
  /** The request target, cut to 200 characters. */
  readonly target?: string | undefined;
  /** The peer address, when served by `agent.serve()`. */
  readonly remoteAddress?: string | undefined;
  /** The execution id, only for causes found after the signature was verified. */
  readonly executionId?: string | undefined;
}

/** Options of the rejection log. */
export interface RejectionLogOptions {
  readonly logger: Logger;
  readonly agentId: string;
  /** Called for every rejection (not rate-limited): feed a metrics counter from it. */
  readonly onRejected?: ((rejection: WebhookRejection) => void) | undefined;
  /** Lines logged per cause per window before the rest are summarised (default 5). */
  readonly burst?: number | undefined;
  /** The rate-limit window in ms (default 60 000). */
  readonly windowMs?: number | undefined;
}

const MAX_TARGET_CHARS = 200;

/** Cuts a target for logging: bounded length, control characters escaped. */
export function loggableTarget(target: string): string {
  const cut = target.length > MAX_TARGET_CHARS ? `${target.slice(0, MAX_TARGET_CHARS)}…` : target;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping control bytes is the point.
  return cut.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

const HINTS: Partial<Record<WebhookRejectionCause, string>> = {
  bad_signature:
    "check that the agent's secret (REBUNO_AGENT_SECRET) is the one registered with the kernel for this agent",
  missing_signature: "webhooks must carry Rebuno-Signature: sha256=<hex>",
  not_found: "check the webhook URL registered with the kernel (path and port)",
  wrong_agent: "two agents share one webhook URL and secret; give each agent its own URL",
};

/**
 * Counts every rejection, calls the hook, and logs the first `burst` of each cause per window;
 * the rest of a window are summarised in one line when the window ends.
 */
export class RejectionLog {
  readonly #counts: Record<WebhookRejectionCause, number>;
  readonly #windowCounts = new Map<WebhookRejectionCause, number>();
  readonly #options: RejectionLogOptions;
  readonly #burst: number;
  readonly #windowMs: number;
  #windowTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: RejectionLogOptions) {
    this.#options = options;
    this.#burst = options.burst ?? 5;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#counts = Object.fromEntries(WEBHOOK_REJECTION_CAUSES.map((c) => [c, 0])) as Record<
      WebhookRejectionCause,
      number
    >;
  }

  /** Totals per cause since the agent started. */
  get counts(): Readonly<Record<WebhookRejectionCause, number>> {
    return { ...this.#counts };
  }

  /** Records one rejection. Never throws (a failing hook or logger is swallowed). */
  record(rejection: WebhookRejection): void {
    this.#counts[rejection.cause]++;
    try {
      this.#options.onRejected?.(rejection);
    } catch {
      // A metrics hook must not turn a refused request into a crash.
    }
    const seen = (this.#windowCounts.get(rejection.cause) ?? 0) + 1;
    this.#windowCounts.set(rejection.cause, seen);
    if (this.#windowTimer === undefined) {
      this.#windowTimer = setTimeout(() => this.#endWindow(), this.#windowMs);
      this.#windowTimer.unref?.();
    }
    if (seen > this.#burst) return;
    const hint = HINTS[rejection.cause];
    this.#log(
      `agent '${this.#options.agentId}' refused a webhook request: ${rejection.cause} (${rejection.status}): ` +
        `${rejection.message}${hint === undefined ? "" : `; ${hint}`}` +
        (seen === this.#burst ? `; further '${rejection.cause}' refusals are summarised once a minute` : ""),
      {
        cause: rejection.cause,
        status: rejection.status,
        ...(rejection.method === undefined ? {} : { method: rejection.method }),
        ...(rejection.target === undefined ? {} : { target: loggableTarget(rejection.target) }),
        ...(rejection.remoteAddress === undefined ? {} : { remoteAddress: rejection.remoteAddress }),
        ...(rejection.executionId === undefined ? {} : { executionId: rejection.executionId }),
      },
    );
  }

  /** Logs the summary of the current window now and stops its timer (on close). */
  flush(): void {
    clearTimeout(this.#windowTimer);
    this.#endWindow();
  }

  #endWindow(): void {
    this.#windowTimer = undefined;
    const suppressed: Record<string, number> = {};
    for (const [cause, seen] of this.#windowCounts) {
      if (seen > this.#burst) suppressed[cause] = seen - this.#burst;
    }
    this.#windowCounts.clear();
    const causes = Object.keys(suppressed);
    if (causes.length === 0) return;
    const text = causes.map((c) => `${c} × ${suppressed[c]}`).join(", ");
    this.#log(`agent '${this.#options.agentId}' refused more webhook requests than were logged: ${text}`, {
      suppressed,
    });
  }

  #log(message: string, fields: Record<string, unknown>): void {
    try {
      this.#options.logger.warn(message, fields);
    } catch {
      // A throwing logger must not take the server down.
    }
  }
}
