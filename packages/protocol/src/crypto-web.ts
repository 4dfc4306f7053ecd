/**
 * Hashing and byte counting without `node:crypto` or `Buffer` (browsers, Cloudflare-style
 * workers): the `default` condition of the `#crypto` import. Step identity and webhook checks are
 * synchronous APIs and WebCrypto has no synchronous digest, so the hashes here are
 * `@noble/hashes` (audited, dependency-free). The agent transport's per-request signature does
 * not come through here on these runtimes: the fetch engine signs with WebCrypto (webcrypto.ts).
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

/** Which implementation the `#crypto` condition picked. */
export const CRYPTO_IMPLEMENTATION = "@noble/hashes";

const encoder = new TextEncoder();

/** Number of UTF-8 bytes of `text` (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}

/** UTF-8 bytes of `text`. */
export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** `head` followed by `tail`, as one array. */
export function joinBytes(head: Uint8Array, tail: Uint8Array): Uint8Array {
  const out = new Uint8Array(head.length + tail.length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}

/** Lowercase hex SHA-256 of `text` (UTF-8). */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(encoder.encode(text)));
}

/** Lowercase hex HMAC-SHA256 of `head` (UTF-8) followed by `body`. */
export function hmacSha256Hex(secret: string | Uint8Array, head: string, body: string | Uint8Array): string {
  const key = typeof secret === "string" ? encoder.encode(secret) : secret;
  const mac = hmac.create(sha256, key);
  mac.update(encoder.encode(head));
  mac.update(typeof body === "string" ? encoder.encode(body) : body);
  return bytesToHex(mac.digest());
}
