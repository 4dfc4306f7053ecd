/**
 * Hashing and byte counting on `node:crypto` and `Buffer`, selected by the `node` condition of the
 * `#crypto` import (package.json "imports"). Node, Deno and Bun all load this one; browsers and
 * workers get crypto-web.ts. Both export the same names with the same results (tests compare them).
 */
import { createHash, createHmac, hash } from "node:crypto";

/** Which implementation the `#crypto` condition picked. */
export const CRYPTO_IMPLEMENTATION = "node:crypto";

/** Number of UTF-8 bytes of `text` (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** UTF-8 bytes of `text`. */
export function utf8Bytes(text: string): Uint8Array {
  return Buffer.from(text, "utf8");
}

/** `head` followed by `tail`, as one array (a Buffer here). */
export function joinBytes(head: Uint8Array, tail: Uint8Array): Uint8Array {
  return Buffer.concat([head, tail]);
}

// One-shot crypto.hash (Node ≥ 20.12; engines requires 20.19) skips the Hash object and its
// update/digest calls: about half the cost of createHash() for the few hundred bytes of args.
/** Lowercase hex SHA-256 of `text` (UTF-8). */
export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

// --- HMAC-SHA256 -------------------------------------------------------------------------------
//
// The kernel verifies a signature on every agent request, and `createHmac` builds an Hmac object
// (key conversion, digest lookup, native context) each time — the largest single cost of a
// request after the socket writes. RFC 2104 HMAC is two hashes over the key's padded forms:
// HMAC(K, m) = H((K' ⊕ opad) ‖ H((K' ⊕ ipad) ‖ m)), K' = K zero-padded to the 64-byte block
// (a longer K is hashed first). The pads are computed once per secret, and each message costs two
// one-shot `crypto.hash` calls. Large messages keep `createHmac`, which streams instead of copying
// them. Tests compare both ways byte for byte.

const BLOCK = 64;
const DIGEST = 32;
// Above this many message bytes the copy into one buffer costs more than the Hmac object saves.
const ONE_SHOT_MAX_BYTES = 16 * 1024;

interface KeyPads {
  /** K' ⊕ ipad (one block). */
  readonly inner: Buffer;
  /** K' ⊕ opad (one block). */
  readonly outer: Buffer;
}

// Pads by string secret (agents have a handful of secrets; bounded so a churn of keys cannot grow it).
const PADS_CACHE_MAX = 256;
const padsCache = new Map<string, KeyPads>();

function keyPads(secret: string | Uint8Array): KeyPads {
  if (typeof secret !== "string") return computePads(secret);
  let pads = padsCache.get(secret);
  if (pads === undefined) {
    if (padsCache.size >= PADS_CACHE_MAX) padsCache.clear();
    pads = computePads(secret);
    padsCache.set(secret, pads);
  }
  return pads;
}

function computePads(secret: string | Uint8Array): KeyPads {
  let key: Uint8Array = typeof secret === "string" ? Buffer.from(secret, "utf8") : secret;
  if (key.byteLength > BLOCK) key = createHash("sha256").update(key).digest();
  const inner = Buffer.alloc(BLOCK, 0x36);
  const outer = Buffer.alloc(BLOCK, 0x5c);
  for (let i = 0; i < key.byteLength; i++) {
    inner[i] = 0x36 ^ key[i]!;
    outer[i] = 0x5c ^ key[i]!;
  }
  return { inner, outer };
}

/** Lowercase hex HMAC-SHA256 of `head` (UTF-8) followed by `body`. */
export function hmacSha256Hex(secret: string | Uint8Array, head: string, body: string | Uint8Array): string {
  const headBytes = Buffer.byteLength(head, "utf8");
  const bodyBytes = typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.byteLength;
  if (headBytes + bodyBytes > ONE_SHOT_MAX_BYTES) {
    return createHmac("sha256", secret).update(head, "utf8").update(body).digest("hex");
  }
  const pads = keyPads(secret);
  const message = Buffer.allocUnsafe(BLOCK + headBytes + bodyBytes);
  pads.inner.copy(message, 0);
  message.write(head, BLOCK, "utf8");
  if (typeof body === "string") message.write(body, BLOCK + headBytes, "utf8");
  else message.set(body, BLOCK + headBytes);
  const outerMessage = Buffer.allocUnsafe(BLOCK + DIGEST);
  pads.outer.copy(outerMessage, 0);
  hash("sha256", message, "buffer").copy(outerMessage, BLOCK);
  return hash("sha256", outerMessage, "hex");
}
