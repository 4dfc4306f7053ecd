/**
 * HMAC-SHA256 through WebCrypto (`crypto.subtle`), which every runtime we support has as a global:
 * browsers, workers, Deno, Bun and Node. It is asynchronous, so it serves the call sites that are
 * asynchronous anyway: the fetch engine signs each attempt with it just before sending.
 */
import { ConfigurationError } from "./errors.js";

const encoder = new TextEncoder();

// Named through the global rather than the DOM lib, which this package does not compile with.
type Subtle = (typeof globalThis.crypto)["subtle"];
type CryptoKey = Awaited<ReturnType<Subtle["importKey"]>>;

// Imported keys by string secret (an agent has a handful; bounded so a churn of keys cannot grow it).
const KEY_CACHE_MAX = 256;
const keyCache = new Map<string, Promise<CryptoKey>>();

function subtle(): Subtle {
  const s = globalThis.crypto?.subtle;
  if (s === undefined) {
    // Browsers expose crypto.subtle only in secure contexts (https or localhost).
    throw new ConfigurationError(
      "WebCrypto (crypto.subtle) is not available here; browsers provide it only on https:// or localhost pages",
    );
  }
  return s;
}

function importKey(secret: string | Uint8Array): Promise<CryptoKey> {
  const raw = typeof secret === "string" ? encoder.encode(secret) : secret;
  return subtle().importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

function hmacKey(secret: string | Uint8Array): Promise<CryptoKey> {
  if (typeof secret !== "string") return importKey(secret);
  let key = keyCache.get(secret);
  if (key === undefined) {
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
    key = importKey(secret);
    keyCache.set(secret, key);
    key.catch(() => keyCache.delete(secret));
  }
  return key;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}

/** Lowercase hex HMAC-SHA256 of `head` (UTF-8) followed by `body`, via WebCrypto. */
export async function hmacSha256HexAsync(
  secret: string | Uint8Array,
  head: string,
  body: string | Uint8Array,
): Promise<string> {
  const key = await hmacKey(secret);
  const headBytes = encoder.encode(head);
  const bodyBytes = typeof body === "string" ? encoder.encode(body) : body;
  const message = new Uint8Array(headBytes.length + bodyBytes.length);
  message.set(headBytes, 0);
  message.set(bodyBytes, headBytes.length);
  return toHex(new Uint8Array(await subtle().sign("HMAC", key, message)));
}
