/**
 * Webhook intake, independent of the HTTP server: route check, size limit, signature, payload
 * parsing. `agent.fetch` and `agent.serve` both adapt their request shape to this. Nothing here
 * throws on what a client sent: every refusal is an answer carrying its cause.
 */
import { KERNEL_PROTOCOL_ENV, type KernelProtocol, verifyWebhookSignature } from "@rebuno/protocol";
import type { WebhookRejectionCause } from "./rejections.js";

/** Bodies above this are refused with 413 before verification (the real payload is ~150 bytes). */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;

/** A validated webhook payload (docs/protocol.md §7.2). */
export interface WebhookDelivery {
  readonly executionId: string;
  readonly dispatchId: string;
  /** `dispatch_attempt`; `1` for a legacy (unfenced) delivery, which carries none. */
  readonly attempt: number;
  readonly leaseTimeoutMs: number;
  /** False for a legacy delivery: the kernel has no attempt fencing. */
  readonly fenced: boolean;
}

/** What the HTTP layer answers. */
export interface WebhookAnswer {
  readonly status: number;
  readonly body: string;
  /** Extra response headers (e.g. `allow` on 405). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Set when the request was refused: why, for the rejection log. */
  readonly rejection?: { readonly cause: WebhookRejectionCause; readonly message: string } | undefined;
}

const json = (status: number, value: unknown): WebhookAnswer => ({ status, body: JSON.stringify(value) });

/** A refusal: the protocol's JSON error envelope plus its cause. */
export function refusal(
  cause: WebhookRejectionCause,
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): WebhookAnswer {
  return {
    status,
    body: JSON.stringify({ code, message }),
    ...(headers === undefined ? {} : { headers }),
    rejection: { cause, message },
  };
}

export const NOT_FOUND: WebhookAnswer = refusal("not_found", 404, "not_found", "not found");
export const METHOD_NOT_ALLOWED: WebhookAnswer = refusal(
  "method_not_allowed",
  405,
  "method_not_allowed",
  "the webhook accepts POST only",
  { allow: "POST" },
);
export const UNSUPPORTED_MEDIA_TYPE: WebhookAnswer = refusal(
  "unsupported_media_type",
  415,
  "unsupported_media_type",
  "webhook bodies must be application/json",
);
export const TOO_LARGE: WebhookAnswer = refusal(
  "payload_too_large",
  413,
  "payload_too_large",
  "body exceeds 1 MiB",
);
export const MISSING_SIGNATURE: WebhookAnswer = refusal(
  "missing_signature",
  401,
  "unauthorized",
  "missing or malformed Rebuno-Signature header",
);
export const UNAUTHORIZED: WebhookAnswer = refusal(
  "bad_signature",
  401,
  "unauthorized",
  "bad webhook signature",
);
export const MALFORMED_TARGET: WebhookAnswer = refusal(
  "malformed_target",
  400,
  "validation_error",
  "malformed request target",
);
export const TRUNCATED_BODY: WebhookAnswer = refusal(
  "truncated_body",
  400,
  "validation_error",
  "the request body ended early",
);
export const CLOSING: WebhookAnswer = refusal("agent_closing", 503, "unavailable", "agent closing");
export const INTERNAL_ERROR: WebhookAnswer = refusal(
  "internal_error",
  500,
  "internal_error",
  "the agent failed to handle the webhook",
);
export const ACCEPTED: WebhookAnswer = json(200, { status: "accepted" });
export const DUPLICATE: WebhookAnswer = json(200, { status: "duplicate" });
export const HEALTHY: WebhookAnswer = json(200, { status: "ok" });

export const badRequest = (message: string): WebhookAnswer =>
  refusal("invalid_body", 400, "validation_error", message);

const protocolMismatch = (message: string): WebhookAnswer =>
  refusal("protocol_mismatch", 400, "validation_error", message);

/** The lease the legacy kernel applies when the agent is not told (its default, 2 minutes). */
export const LEGACY_DEFAULT_LEASE_SECONDS = 120;

const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Path part of a request target (query ignored, so `/webhook?x=1` still matches), or `undefined`
 * when the target is neither origin-form (`/path`) nor a parsable absolute URL. Never throws.
 */
export function pathOf(target: string): string | undefined {
  if (ABSOLUTE.test(target)) {
    if (!/^https?:/i.test(target) || !URL.canParse(target)) return undefined;
    return new URL(target).pathname;
  }
  if (!target.startsWith("/")) return undefined;
  const q = target.indexOf("?");
  return q === -1 ? target : target.slice(0, q);
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

/** True when a `Content-Type` is absent or JSON (`application/json`, `application/*+json`). */
export function isJsonContentType(contentType: string | null | undefined): boolean {
  return contentType === undefined || contentType === null || JSON_MEDIA_TYPE.test(contentType.trim());
}

/** Verifies the `Rebuno-Signature` header over the exact body bytes. */
export function verifyDelivery(
  secret: string,
  body: Uint8Array,
  signature: string | null | undefined,
): WebhookAnswer | undefined {
  if (typeof signature !== "string" || !/^sha256=[0-9a-f]{64}$/i.test(signature.trim())) {
    return MISSING_SIGNATURE;
  }
  return verifyWebhookSignature(secret, body, signature.trim()) ? undefined : UNAUTHORIZED;
}

function protocolHint(want: KernelProtocol): string {
  return `set the agent's \`protocol\` option (or ${KERNEL_PROTOCOL_ENV}) to "${want}" to match the kernel`;
}

/**
 * Parses and validates a payload for the configured protocol generation; returns the delivery
 * or a 400 answer. `v1` requires `dispatch_attempt` (a webhook without it comes from a legacy
 * kernel, and running it unfenced would silently lose supersession); `legacy` refuses a payload
 * that carries one (the agent would sign its requests the old way, which a v1 kernel refuses).
 */
export function parseDelivery(
  body: Uint8Array,
  protocol: KernelProtocol = "v1",
  legacyLeaseSeconds: number = LEGACY_DEFAULT_LEASE_SECONDS,
): WebhookDelivery | WebhookAnswer {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return badRequest("body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return badRequest("body must be a JSON object");
  }
  const p = value as Record<string, unknown>;
  if (typeof p.execution_id !== "string" || p.execution_id === "")
    return badRequest("execution_id is required");
  if (typeof p.dispatch_id !== "string" || p.dispatch_id === "") return badRequest("dispatch_id is required");
  const attempt = p.dispatch_attempt;
  if (protocol === "legacy") {
    if (attempt !== undefined || p.lease_timeout_seconds !== undefined) {
      return protocolMismatch(
        `webhook carries dispatch_attempt/lease_timeout_seconds, which only a v1 kernel sends, but this agent is set to protocol "legacy"; ${protocolHint("v1")}`,
      );
    }
    return {
      executionId: p.execution_id,
      dispatchId: p.dispatch_id,
      attempt: 1,
      leaseTimeoutMs: Math.round(legacyLeaseSeconds * 1000),
      fenced: false,
    };
  }
  if (attempt === undefined) {
    return protocolMismatch(
      `webhook has no dispatch_attempt: it comes from a legacy kernel, and this agent is set to protocol "v1" (attempt fencing); ${protocolHint("legacy")}`,
    );
  }
  if (typeof attempt !== "number" || !Number.isInteger(attempt) || attempt < 1) {
    return badRequest("dispatch_attempt must be a positive integer");
  }
  const lease = p.lease_timeout_seconds ?? LEGACY_DEFAULT_LEASE_SECONDS;
  // Guard NaN/0: setInterval(NaN) fires about every millisecond.
  if (typeof lease !== "number" || !Number.isFinite(lease) || lease <= 0) {
    return badRequest("lease_timeout_seconds must be a positive number");
  }
  return {
    executionId: p.execution_id,
    dispatchId: p.dispatch_id,
    attempt,
    leaseTimeoutMs: Math.round(lease * 1000),
    fenced: true,
  };
}

/** Type guard separating a parsed delivery from an error answer. */
export function isDelivery(value: WebhookDelivery | WebhookAnswer): value is WebhookDelivery {
  return "executionId" in value;
}
