// `#crypto` is node:crypto on Node, Deno and Bun, @noble/hashes elsewhere (package.json "imports").
import { hmacSha256Hex, joinBytes, utf8Bytes } from "#crypto";
import { hmacSha256HexAsync } from "./webcrypto.js";

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

/** Fields covered by the v1 request signature (docs/protocol.md §3.3). */
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

/** The exact bytes HMAC'd by the v1 request signature (a `Buffer` on Node, Deno and Bun). */
export function requestSigningMessage(input: RequestSigningInput): Uint8Array {
  const head = utf8Bytes(signingHeader(input));
  const body = typeof input.body === "string" ? utf8Bytes(input.body) : input.body;
  return body.length === 0 ? head : joinBytes(head, body);
}

function requestHex(secret: SigningSecret, input: RequestSigningInput): string {
  return hmacSha256Hex(secret, signingHeader(input), input.body);
}

/** `v1=<lowercase hex HMAC-SHA256(secret, message)>` for the `Rebuno-Signature` header. */
export function signRequest(input: RequestSigningInput & { readonly secret: SigningSecret }): string {
  return REQUEST_SIG_PREFIX + requestHex(input.secret, input);
}

/**
 * {@link signRequest} through WebCrypto (`crypto.subtle`): the same header value, computed
 * asynchronously. The fetch engine signs with it on runtimes without `node:crypto`.
 */
export async function signRequestAsync(
  input: RequestSigningInput & { readonly secret: SigningSecret },
): Promise<string> {
  return REQUEST_SIG_PREFIX + (await hmacSha256HexAsync(input.secret, signingHeader(input), input.body));
}

// Constant-time comparison of a received header with the expected signature text, which is
// ASCII, so comparing UTF-16 code units gives the same answer as comparing UTF-8 bytes. No early
// exit: every code unit is XORed into one accumulator. This replaced two Buffer copies plus
// `timingSafeEqual` on every agent request. The length is not secret (fixed by the format).
function safeEqualText(received: string, expected: string): boolean {
  if (received.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= received.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
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
  // Fast path for what every agent sends (up to 15 unsigned digits): exact in doubles, so the
  // comparison equals the BigInt one below without its allocations. Any other input (a sign,
  // more digits, odd `now`/window values) takes the exact path.
  const now = Math.floor(nowSeconds);
  if (
    isShortUnsignedDecimal(timestamp) &&
    Number.isSafeInteger(now) &&
    Number.isSafeInteger(windowSeconds) &&
    Math.abs(now) + Math.abs(windowSeconds) <= Number.MAX_SAFE_INTEGER
  ) {
    const ts = Number(timestamp);
    return ts >= now - windowSeconds && ts <= now + windowSeconds;
  }
  if (!INT64_TEXT.test(timestamp)) return false;
  const ts = BigInt(timestamp);
  if (ts > 9223372036854775807n || ts < -9223372036854775808n) return false;
  const nowBig = BigInt(now);
  const w = BigInt(windowSeconds);
  return ts >= nowBig - w && ts <= nowBig + w;
}

// 1 to 15 ASCII digits: such a value is below 2^53, so `Number` parses it exactly.
function isShortUnsignedDecimal(text: string): boolean {
  const n = text.length;
  if (n < 1 || n > 15) return false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** `sha256=<lowercase hex HMAC-SHA256(secret, body)>`: the kernel → agent webhook signature. */
export function webhookSignature(secret: SigningSecret, body: string | Uint8Array): string {
  return WEBHOOK_SIG_PREFIX + hmacSha256Hex(secret, "", body);
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
