import { createHmac, timingSafeEqual } from "node:crypto";

/** Agent id header on every agent → kernel request. */
export const HEADER_AGENT_ID = "Rebuno-Agent-Id";
/** Decimal Unix seconds; must be within ±{@link SIGNATURE_CLOCK_WINDOW_SECONDS} of the kernel clock. */
export const HEADER_TIMESTAMP = "Rebuno-Timestamp";
/** Dispatch id of the lease (from the webhook). */
export const HEADER_DISPATCH_ID = "Rebuno-Dispatch-Id";
/** Decimal dispatch attempt of the lease (from the webhook). */
export const HEADER_DISPATCH_ATTEMPT = "Rebuno-Dispatch-Attempt";
/** `v1=<hex>` on agent requests, `sha256=<hex>` on webhooks. */
export const HEADER_SIGNATURE = "Rebuno-Signature";
/** Execution id header the kernel adds to webhook deliveries. */
export const HEADER_EXECUTION_ID = "Rebuno-Execution-Id";
/** Accepted clock skew for `Rebuno-Timestamp`, inclusive, in seconds. */
export const SIGNATURE_CLOCK_WINDOW_SECONDS = 300;

const REQUEST_PREFIX = "rebuno-request-v1\n";
const REQUEST_SIG_PREFIX = "v1=";
const WEBHOOK_SIG_PREFIX = "sha256=";

/** HMAC key: the agent secret. */
export type SigningSecret = string | Uint8Array;

/** Fields covered by the v1 request signature (protocol §3.3). */
export interface RequestSigningInput {
  /** HTTP method as sent (`POST`). */
  readonly method: string;
  /** Request target exactly as on the request line: escaped path, plus `?` and the raw query. */
  readonly target: string;
  /** The `Rebuno-Timestamp` header value (decimal Unix seconds). */
  readonly timestamp: string | number;
  /** `Rebuno-Dispatch-Id`, when sent. */
  readonly dispatchId?: string | undefined;
  /** `Rebuno-Dispatch-Attempt`, when sent. */
  readonly dispatchAttempt?: string | number | undefined;
  /** The exact body bytes sent (empty for GETs, heartbeat and suspend). */
  readonly body: string | Uint8Array;
}

function signingHeader(input: RequestSigningInput): string {
  return (
    `${REQUEST_PREFIX}${input.method}\n${input.target}\n${input.timestamp}\n` +
    `${input.dispatchId ?? ""}\n${input.dispatchAttempt ?? ""}\n`
  );
}

/** The exact bytes HMAC'd by the v1 request signature. */
export function requestSigningMessage(input: RequestSigningInput): Buffer {
  const head = Buffer.from(signingHeader(input), "utf8");
  const body = typeof input.body === "string" ? Buffer.from(input.body, "utf8") : input.body;
  return body.length === 0 ? head : Buffer.concat([head, body]);
}

function requestHex(secret: SigningSecret, input: RequestSigningInput): string {
  // Two updates instead of concatenating: avoids copying the body.
  return createHmac("sha256", secret).update(signingHeader(input), "utf8").update(input.body).digest("hex");
}

/** `v1=<lowercase hex HMAC-SHA256(secret, message)>` for the `Rebuno-Signature` header. */
export function signRequest(input: RequestSigningInput & { readonly secret: SigningSecret }): string {
  return REQUEST_SIG_PREFIX + requestHex(input.secret, input);
}

// Constant-time comparison of two ASCII strings (length is not secret: it is fixed by format).
function safeEqualText(a: string, b: string): boolean {
  const ab = Buffer.from(a, "utf8");
  const bb = Buffer.from(b, "utf8");
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/**
 * Verify a `Rebuno-Signature: v1=…` header in constant time. The comparison is exact (as the
 * kernel's): uppercase hex does not verify. Does not check the timestamp window; see
 * {@link isTimestampWithinWindow}.
 */
export function verifyRequestSignature(
  input: RequestSigningInput & {
    readonly secret: SigningSecret;
    readonly signature: string | null | undefined;
  },
): boolean {
  if (typeof input.signature !== "string" || !input.signature.startsWith(REQUEST_SIG_PREFIX)) return false;
  return safeEqualText(input.signature, REQUEST_SIG_PREFIX + requestHex(input.secret, input));
}

const INT64_TEXT = /^[+-]?\d{1,19}$/;

/**
 * True when `timestamp` parses as a base-10 int64 (like Go `strconv.ParseInt`) and
 * `now − window ≤ ts ≤ now + window`, inclusive. `nowSeconds` is Unix seconds.
 */
export function isTimestampWithinWindow(
  timestamp: string,
  nowSeconds: number,
  windowSeconds: number = SIGNATURE_CLOCK_WINDOW_SECONDS,
): boolean {
  if (!INT64_TEXT.test(timestamp)) return false;
  const ts = BigInt(timestamp);
  if (ts > 9223372036854775807n || ts < -9223372036854775808n) return false;
  const now = BigInt(Math.floor(nowSeconds));
  const w = BigInt(windowSeconds);
  return ts >= now - w && ts <= now + w;
}

/** `sha256=<lowercase hex HMAC-SHA256(secret, body)>`: the kernel → agent webhook signature. */
export function webhookSignature(secret: SigningSecret, body: string | Uint8Array): string {
  return WEBHOOK_SIG_PREFIX + createHmac("sha256", secret).update(body).digest("hex");
}

/**
 * Verify a webhook `Rebuno-Signature` header against the raw body in constant time. False when
 * the header is missing or does not start with `sha256=`.
 */
export function verifyWebhookSignature(
  secret: SigningSecret,
  body: string | Uint8Array,
  header: string | null | undefined,
): boolean {
  if (typeof header !== "string" || !header.startsWith(WEBHOOK_SIG_PREFIX)) return false;
  return safeEqualText(header, webhookSignature(secret, body));
}
