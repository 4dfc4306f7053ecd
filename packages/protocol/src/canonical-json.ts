/**
 * Canonical JSON exactly as the Go kernel computes it (docs/protocol.md §5.2): decode with `UseNumber`,
 * re-encode with `encoding/json`. Two implementations with one result: canonical-text.ts parses
 * raw JSON text (the kernel's input, number literals kept byte-for-byte); canonical-value.ts walks
 * a JS value and equals the text path applied to `toWireJson(value)`.
 */
import { canonicalizeText, GO_MAX_DEPTH } from "./canonical-text.js";
import { canonicalValue } from "./canonical-value.js";
import { toWireJson } from "./strict-json.js";
import { decodeUtf8Go } from "./utf8.js";

export { compareUtf8, encodeGoString } from "./go-string.js";

/** Options for {@link canonicalJsonText}. */
export interface CanonicalJsonOptions {
  /** Maximum nesting of arrays/objects; deeper input is a `ValidationError`. Default 10 000 (Go). */
  readonly maxDepth?: number;
}

/**
 * Go `encoding/json` canonical form of raw JSON text (docs/protocol.md §5.2): no whitespace, object keys
 * sorted by UTF-8 bytes with the last duplicate winning, number literals verbatim, strings
 * re-escaped Go-style. Bytes are decoded like Go (each invalid UTF-8 byte → U+FFFD); lone
 * surrogates become U+FFFD. Empty input → `"null"`. Invalid JSON → `ValidationError`.
 */
export function canonicalJsonText(text: string | Uint8Array, options?: CanonicalJsonOptions): string {
  const s = typeof text === "string" ? text : decodeUtf8Go(text);
  if (s.length === 0) return "null";
  return canonicalizeText(s, options?.maxDepth ?? GO_MAX_DEPTH);
}

/**
 * Canonical form of a JS value: exactly `canonicalJsonText(toWireJson(value))`, what the kernel
 * computes from the body the SDK sends, but computed by walking the value. Strict like
 * `toWireJson` (TypeError naming the path); `RawJson` values are canonicalized from their text;
 * `undefined` → `"null"`.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return "null";
  return canonicalValue(value) ?? canonicalJsonText(toWireJson(value));
}
