/**
 * Test-only reference: the text canonicalizer as it was before the copy-through rewrite
 * (canonical-text.ts) and the value walker (canonical-value.ts), kept verbatim apart from the
 * exports so the differential tests can compare the new code against it. It rebuilds every value
 * as a string; simple, and verified against the Go-generated vectors.
 */
import { ValidationError } from "../src/errors.js";
import { toWireJson } from "../src/strict-json.js";
import { decodeUtf8Go } from "../src/utf8.js";

/** Go's `encoding/json` nesting limit (`maxNestingDepth`). */
const GO_MAX_DEPTH = 10_000;

/** Options for {@link canonicalJsonText}. */
interface CanonicalJsonOptions {
  /** Maximum nesting of arrays/objects; deeper input is a `ValidationError`. Default 10 000 (Go). */
  readonly maxDepth?: number;
}

const REPLACEMENT = "\ufffd";

// String.prototype.toWellFormed exists on Node ≥ 20 but is not in the ES2023 lib typings.
const toWellFormed = (s: string): string => (s as unknown as { toWellFormed(): string }).toWellFormed();

interface Frame {
  /** Object members (undefined for arrays). */
  members: Map<string, string> | undefined;
  /** Key of the object member being parsed. */
  key: string;
  /** Array output so far. */
  out: string;
}

function encodeObject(members: Map<string, string>): string {
  const keys = [...members.keys()].sort(compareUtf8);
  let out = "{";
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    out += `${k > 0 ? "," : ""}${encodeGoString(key)}:${members.get(key)}`;
  }
  return `${out}}`;
}

class CanonicalParser {
  i = 0;
  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
  ) {}

  fail(what: string): never {
    const at = this.i < this.s.length ? `at offset ${this.i}` : "at end of input";
    throw new ValidationError(`invalid JSON: ${what} ${at}`);
  }

  ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.i = i;
  }

  document(): string {
    this.ws();
    const out = this.value();
    this.ws();
    if (this.i !== this.s.length) this.fail("unexpected data after top-level value");
    return out;
  }

  // Key of an object member plus the ':' after it; leaves `i` on the member's value.
  key(): string {
    if (this.s.charCodeAt(this.i) !== 0x22) this.fail("expected string key");
    const key = this.string();
    this.ws();
    if (this.s.charCodeAt(this.i) !== 0x3a) this.fail("expected ':'");
    this.i++;
    this.ws();
    return key;
  }

  // Iterative (explicit stack) so Go's 10 000 nesting levels never touch the JS call stack.
  value(): string {
    const s = this.s;
    const stack: Frame[] = [];
    for (;;) {
      // Parse the start of a value; containers push a frame and loop to their first member.
      let done: string;
      const c = s.charCodeAt(this.i);
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (stack.length >= this.maxDepth) this.fail("exceeded max depth");
        this.i++;
        this.ws();
        if (c === 0x7b) {
          if (s.charCodeAt(this.i) === 0x7d) {
            this.i++;
            done = "{}";
          } else {
            stack.push({ members: new Map(), key: this.key(), out: "" });
            continue;
          }
        } else if (s.charCodeAt(this.i) === 0x5d) {
          this.i++;
          done = "[]";
        } else {
          stack.push({ members: undefined, key: "", out: "[" });
          continue;
        }
      } else {
        done = this.scalar(c);
      }
      // Attach the finished value to its parents, closing every container that ends here.
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) return done;
        // Go decodes objects into a map: a later duplicate replaces the earlier value.
        if (top.members !== undefined) top.members.set(top.key, done);
        else top.out += top.out.length === 1 ? done : `,${done}`;
        this.ws();
        const d = s.charCodeAt(this.i);
        if (d === 0x2c /* , */) {
          this.i++;
          this.ws();
          if (top.members !== undefined) top.key = this.key();
          break;
        }
        if (top.members !== undefined ? d !== 0x7d : d !== 0x5d) {
          this.fail(top.members !== undefined ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        this.i++;
        stack.pop();
        done = top.members !== undefined ? encodeObject(top.members) : `${top.out}]`;
      }
    }
  }

  scalar(c: number): string {
    const s = this.s;
    if (c === 0x22) return encodeGoString(this.string());
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (s.startsWith("true", this.i)) return this.literal("true");
    if (s.startsWith("false", this.i)) return this.literal("false");
    if (s.startsWith("null", this.i)) return this.literal("null");
    return this.fail(this.i < s.length ? "unexpected character" : "unexpected end of input");
  }

  literal(text: string): string {
    this.i += text.length;
    return text;
  }

  // RFC 8259 number grammar; the literal text is returned untouched (Go `json.Number`).
  number(): string {
    const s = this.s;
    const start = this.i;
    let i = start;
    if (s.charCodeAt(i) === 0x2d) i++;
    const first = s.charCodeAt(i);
    if (first === 0x30) i++;
    else if (first >= 0x31 && first <= 0x39) {
      while (isDigit(s.charCodeAt(i))) i++;
    } else {
      this.i = i;
      this.fail("invalid number");
    }
    if (s.charCodeAt(i) === 0x2e) {
      i++;
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i;
        this.fail("invalid number");
      }
      while (isDigit(s.charCodeAt(i))) i++;
    }
    const e = s.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i;
        this.fail("invalid number");
      }
      while (isDigit(s.charCodeAt(i))) i++;
    }
    this.i = i;
    return s.slice(start, i);
  }

  /** Decodes the string at `this.i` (on the opening quote) to a well-formed JS string. */
  string(): string {
    const s = this.s;
    let i = this.i + 1;
    let sawSurrogate = false;
    // Fast path: no escapes.
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        const raw = s.slice(this.i + 1, i);
        this.i = i + 1;
        return sawSurrogate ? toWellFormed(raw) : raw;
      }
      if (c === 0x5c || c < 0x20 || Number.isNaN(c)) break;
      if (c >= 0xd800 && c <= 0xdfff) sawSurrogate = true;
      i++;
    }
    return this.stringSlow();
  }

  stringSlow(): string {
    const s = this.s;
    let i = this.i + 1;
    let out = "";
    let runStart = i;
    const flush = (end: number): void => {
      // Raw lone surrogates (e.g. from a bad decode) become U+FFFD, like invalid UTF-8 in Go.
      if (end > runStart) out += toWellFormed(s.slice(runStart, end));
    };
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        flush(i);
        this.i = i + 1;
        return out;
      }
      if (Number.isNaN(c)) {
        this.i = i;
        this.fail("unterminated string");
      }
      if (c < 0x20) {
        this.i = i;
        this.fail("control character in string");
      }
      if (c !== 0x5c) {
        i++;
        continue;
      }
      flush(i);
      const e = s.charCodeAt(i + 1);
      let unit = "";
      switch (e) {
        case 0x22:
          unit = '"';
          break;
        case 0x5c:
          unit = "\\";
          break;
        case 0x2f:
          unit = "/";
          break;
        case 0x62:
          unit = "\b";
          break;
        case 0x66:
          unit = "\f";
          break;
        case 0x6e:
          unit = "\n";
          break;
        case 0x72:
          unit = "\r";
          break;
        case 0x74:
          unit = "\t";
          break;
        case 0x75: {
          const r = hex4(s, i + 2);
          if (r < 0) {
            this.i = i;
            this.fail("invalid \\u escape");
          }
          i += 6;
          if (r >= 0xd800 && r <= 0xdfff) {
            // Go: a valid high+low escape pair is one code point; anything else is U+FFFD and the
            // following escape (if any) is decoded on its own.
            const r2 = s.charCodeAt(i) === 0x5c && s.charCodeAt(i + 1) === 0x75 ? hex4(s, i + 2) : -1;
            if (r <= 0xdbff && r2 >= 0xdc00 && r2 <= 0xdfff) {
              out += String.fromCharCode(r, r2);
              i += 6;
            } else {
              out += REPLACEMENT;
            }
          } else {
            out += String.fromCharCode(r);
          }
          runStart = i;
          continue;
        }
        default:
          this.i = i;
          this.fail("invalid escape");
      }
      out += unit;
      i += 2;
      runStart = i;
    }
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

function hex4(s: string, at: number): number {
  let r = 0;
  for (let k = 0; k < 4; k++) {
    const h = hexValue(s.charCodeAt(at + k));
    if (h < 0) return -1;
    r = (r << 4) | h;
  }
  return r;
}

/**
 * Order strings by their UTF-8 bytes (= code point order). UTF-16 order differs only between a
 * surrogate (astral character) and U+E000–U+FFFF, so only that case is remapped.
 */
function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) {
    let x = a.charCodeAt(k);
    let y = b.charCodeAt(k);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029]/;
const HEX = "0123456789abcdef";

/** Encode a well-formed string the way Go `encoding/json` does (HTML-safe, lowercase `\u00XX`). */
function encodeGoString(str: string): string {
  if (!NEEDS_ESCAPE.test(str)) return `"${str}"`;
  let out = '"';
  let runStart = 0;
  for (let k = 0; k < str.length; k++) {
    const c = str.charCodeAt(k);
    let esc: string;
    if (c === 0x22) esc = '\\"';
    else if (c === 0x5c) esc = "\\\\";
    else if (c < 0x20) {
      if (c === 0x08) esc = "\\b";
      else if (c === 0x0c) esc = "\\f";
      else if (c === 0x0a) esc = "\\n";
      else if (c === 0x0d) esc = "\\r";
      else if (c === 0x09) esc = "\\t";
      else esc = `\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`;
    } else if (c === 0x3c) esc = "\\u003c";
    else if (c === 0x3e) esc = "\\u003e";
    else if (c === 0x26) esc = "\\u0026";
    else if (c === 0x2028) esc = "\\u2028";
    else if (c === 0x2029) esc = "\\u2029";
    else continue;
    out += str.slice(runStart, k) + esc;
    runStart = k + 1;
  }
  return `${out + str.slice(runStart)}"`;
}

/**
 * Go `encoding/json` canonical form of raw JSON text (docs/protocol.md §5.2): no whitespace, object keys
 * sorted by UTF-8 bytes with the last duplicate winning, number literals verbatim, strings
 * re-escaped Go-style. Bytes are decoded like Go (each invalid UTF-8 byte → U+FFFD); lone
 * surrogates become U+FFFD. Empty input → `"null"`. Invalid JSON → `ValidationError`.
 */
export function referenceCanonicalText(
  text: string | Uint8Array,
  options: CanonicalJsonOptions = {},
): string {
  const s = typeof text === "string" ? text : decodeUtf8Go(text);
  if (s.length === 0) return "null";
  const parser = new CanonicalParser(s, options.maxDepth ?? GO_MAX_DEPTH);
  try {
    return parser.document();
  } catch (err) {
    if (err instanceof RangeError)
      throw new ValidationError("invalid JSON: nesting too deep", { cause: err });
    throw err;
  }
}

/** The old `canonicalJson`: serialize strictly, then canonicalize the text. */
export function referenceCanonicalValue(value: unknown): string {
  return referenceCanonicalText(toWireJson(value));
}
