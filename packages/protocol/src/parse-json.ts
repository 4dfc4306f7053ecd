import { ValidationError } from "./errors.js";
import { decodeUtf8Go } from "./utf8.js";

/** Options for {@link parseJson} and {@link parseJsonObjectWithRaw}. */
export interface ParseJsonOptions {
  /** Maximum nesting of arrays/objects (default 512). Deeper input is a `ValidationError`. */
  readonly maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 512;

// Cheap necessary condition for depth > limit: more than `limit` opening brackets in the text
// (native indexOf jumps; most documents stop here).
function manyOpeners(text: string, limit: number): boolean {
  let n = 0;
  for (let i = text.indexOf("{"); i !== -1; i = text.indexOf("{", i + 1)) if (++n > limit) return true;
  for (let i = text.indexOf("["); i !== -1; i = text.indexOf("[", i + 1)) if (++n > limit) return true;
  return false;
}

/**
 * True when arrays/objects nest deeper than `limit`. Brackets inside strings are skipped (string
 * bodies are crossed with indexOf). Assumes nothing about validity; JSON.parse checks that.
 */
function exceedsDepth(text: string, limit: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Jump to the closing quote: one preceded by an even number of backslashes.
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q === -1) return false;
        let b = q - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        i = q;
        if ((q - 1 - b) % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

function toText(text: string | Uint8Array): string {
  return typeof text === "string" ? text : decodeUtf8Go(text);
}

/**
 * `JSON.parse` with a nesting bound (hostile input such as 200 000 nested arrays parses fine but
 * then crashes recursive consumers). Malformed or too deep → `ValidationError("invalid JSON: …")`.
 * Bytes are decoded as UTF-8 the way Go does (each invalid byte → U+FFFD).
 */
export function parseJson(text: string | Uint8Array, options: ParseJsonOptions = {}): unknown {
  const s = toText(text);
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  // Deeper than maxDepth needs more than maxDepth characters and opening brackets.
  if (s.length > maxDepth && manyOpeners(s, maxDepth) && exceedsDepth(s, maxDepth)) {
    throw new ValidationError(`invalid JSON: nesting deeper than ${maxDepth}`);
  }
  try {
    return JSON.parse(s);
  } catch (err) {
    throw new ValidationError(`invalid JSON: ${(err as Error).message}`, { cause: err });
  }
}

/** Result of {@link parseJsonObjectWithRaw}. */
export interface JsonObjectWithRaw {
  /** The parsed object. */
  readonly value: Record<string, unknown>;
  /** Raw JSON text of each top-level field (last duplicate wins), e.g. `{"args": "{\"n\":1.0}"}`. */
  readonly raw: Record<string, string>;
}

function skipWs(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else return i;
  }
}

// Index just past the string starting at `i` (on its opening quote). Input is known valid.
function skipString(s: string, i: number): number {
  for (i++; ; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
}

// Index just past the value starting at `i`. Input is known valid.
function skipValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22) return skipString(s, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (;;) {
      const d = s.charCodeAt(i);
      if (d === 0x22) {
        i = skipString(s, i);
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return i + 1;
      }
      i++;
    }
  }
  // number / true / false / null: runs until a delimiter
  for (;;) {
    const d = s.charCodeAt(i);
    if (Number.isNaN(d) || d === 0x2c || d === 0x7d || d === 0x5d || d <= 0x20) return i;
    i++;
  }
}

/**
 * Parse a JSON object and also return the raw text of each top-level field, so a store can keep
 * `args`/`result` byte-exact (`1.0` stays `1.0`). Validates like {@link parseJson}; a
 * non-object document is a `ValidationError`. Duplicate keys: the last one wins, in both
 * `value` and `raw`.
 */
export function parseJsonObjectWithRaw(
  text: string | Uint8Array,
  options: ParseJsonOptions = {},
): JsonObjectWithRaw {
  const s = toText(text);
  const value = parseJson(s, options);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ValidationError("invalid JSON: expected an object");
  }
  // Null prototype: a "__proto__" key must stay an ordinary own property.
  const raw = Object.create(null) as Record<string, string>;
  let i = skipWs(s, 0) + 1; // past "{"
  i = skipWs(s, i);
  if (s.charCodeAt(i) === 0x7d) return { value: value as Record<string, unknown>, raw };
  for (;;) {
    const keyEnd = skipString(s, i);
    const keyText = s.slice(i, keyEnd);
    const key = keyText.includes("\\") ? (JSON.parse(keyText) as string) : keyText.slice(1, -1);
    i = skipWs(s, keyEnd) + 1; // past ":"
    const start = skipWs(s, i);
    i = skipValue(s, start);
    raw[key] = s.slice(start, i);
    i = skipWs(s, i);
    if (s.charCodeAt(i) === 0x7d) break;
    i = skipWs(s, i + 1); // past ","
  }
  return { value: value as Record<string, unknown>, raw };
}
