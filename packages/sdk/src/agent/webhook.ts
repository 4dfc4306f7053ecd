/**
 * Webhook intake, independent of the HTTP server: route check, size limit, signature, payload
 * parsing. `agent.fetch` and `agent.serve` both adapt their request shape to this.
 */
import { verifyWebhookSignature } from "@rebuno/protocol";

/** Bodies above this are refused with 413 before verification (the real payload is ~150 bytes). */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;

/** A validated webhook payload (protocol §7.2). */
export interface WebhookDelivery {
  readonly executionId: string;
  readonly dispatchId: string;
  readonly attempt: number;
  readonly leaseTimeoutMs: number;
}

/** What the HTTP layer answers. */
export interface WebhookAnswer {
  readonly status: number;
  readonly body: string;
}

const json = (status: number, value: unknown): WebhookAnswer => ({ status, body: JSON.stringify(value) });

export const NOT_FOUND: WebhookAnswer = json(404, { code: "not_found", message: "not found" });
export const TOO_LARGE: WebhookAnswer = json(413, {
  code: "payload_too_large",
  message: "body exceeds 1 MiB",
});
export const UNAUTHORIZED: WebhookAnswer = json(401, {
  code: "unauthorized",
  message: "bad webhook signature",
});
export const ACCEPTED: WebhookAnswer = json(200, { status: "accepted" });
export const DUPLICATE: WebhookAnswer = json(200, { status: "duplicate" });
export const HEALTHY: WebhookAnswer = json(200, { status: "ok" });

export const badRequest = (message: string): WebhookAnswer =>
  json(400, { code: "validation_error", message });

// The kernel default lease when a payload omits it (protocol §7.2: 2 minutes).
const DEFAULT_LEASE_SECONDS = 120;

/** Path part of a request target (query ignored, so `/webhook?x=1` still matches). */
export function pathOf(target: string): string {
  const q = target.indexOf("?");
  const path = q === -1 ? target : target.slice(0, q);
  if (path.startsWith("http://") || path.startsWith("https://")) return new URL(path).pathname;
  return path;
}

/** Verifies the `Rebuno-Signature` header over the exact body bytes. */
export function verifyDelivery(
  secret: string,
  body: Uint8Array,
  signature: string | null | undefined,
): boolean {
  return typeof signature === "string" && verifyWebhookSignature(secret, body, signature);
}

/** Parses and validates a payload; returns the delivery or a 400 answer. */
export function parseDelivery(body: Uint8Array): WebhookDelivery | WebhookAnswer {
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
  if (typeof attempt !== "number" || !Number.isInteger(attempt) || attempt < 1) {
    return badRequest("dispatch_attempt must be a positive integer");
  }
  const lease = p.lease_timeout_seconds ?? DEFAULT_LEASE_SECONDS;
  // Guard NaN/0: setInterval(NaN) fires about every millisecond.
  if (typeof lease !== "number" || !Number.isFinite(lease) || lease <= 0) {
    return badRequest("lease_timeout_seconds must be a positive number");
  }
  return {
    executionId: p.execution_id,
    dispatchId: p.dispatch_id,
    attempt,
    leaseTimeoutMs: Math.round(lease * 1000),
  };
}

/** Type guard separating a parsed delivery from an error answer. */
export function isDelivery(value: WebhookDelivery | WebhookAnswer): value is WebhookDelivery {
  return "executionId" in value;
}
