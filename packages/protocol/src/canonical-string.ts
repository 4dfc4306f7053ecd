// String literals of JSON text → Go `encoding/json` encoding, for the text canonicalizer
// (canonical-text.ts). docs/protocol.md §5.2 items 3 and 6: escapes resolved, unpaired surrogates →
// U+FFFD, then Go's escaping. A literal that is already in Go's form is reported as such, so the
// caller copies it through instead of rebuilding it.
import { ValidationError } from "./errors.js";
import { ASCII_PLAIN, goUnit, hasWide, LOOP_CHARS, plainRunEnd, toWellFormed } from "./go-string.js";

const REPLACEMENT = "\ufffd";

/** Bit c - 0x20 set for the code units 0x20–0x3F that end a plain run: `"` `&` `<` `>`. */
const SPECIAL_20_3F =
  (1 << (0x22 - 0x20)) | (1 << (0x26 - 0x20)) | (1 << (0x3c - 0x20)) | (1 << (0x3e - 0x20));

/** The canonicalizer's syntax error: `invalid JSON: <what> at offset <i>` (or at end of input). */
export function jsonError(s: string, i: number, what: string): ValidationError {
  return new ValidationError(`invalid JSON: ${what} ${i < s.length ? `at offset ${i}` : "at end of input"}`);
}

/**
 * What {@link scanLiteral} found, in one reused object (no allocation per literal): `end` is the
 * offset after the closing quote; `out` the canonical text, undefined when that is the literal
 * itself; for keys, `key` the decoded string and `wide` whether it has a code unit ≥ U+D800
 * (where UTF-16 order is not UTF-8 order).
 */
export const literal = { end: 0, out: undefined as string | undefined, key: "", wide: false };

/** Forgets the last literal (its strings may be slices that pin the whole input). */
export function clearLiteral(): void {
  literal.out = undefined;
  literal.key = "";
}

/**
 * Scans the string literal at `start` (on its quote) into {@link literal}. Fast path: a literal
 * with no escape and nothing Go escapes is its own canonical form.
 */
export function scanLiteral(s: string, start: number, key: boolean): void {
  let j = start + 1;
  let wide = false;
  let run = 0; // plain characters since the last plainRunEnd
  for (;;) {
    const c = s.charCodeAt(j);
    // Compares rather than an ASCII_PLAIN lookup: letters take the first test, and the few
    // specials below U+0040 are one mask test (bits for " & < > above U+0020).
    if (c >= 0x40) {
      if (c < 0x80) {
        if (c === 0x5c) {
          transcode(s, start, key);
          return;
        }
        j++;
      } else if (c < 0x2028 || (c > 0x2029 && c < 0xd800)) j++;
      else if (c >= 0xe000) {
        wide = true;
        j++;
        continue;
      } else if (c >= 0xd800 && c <= 0xdbff && isLow(s.charCodeAt(j + 1))) {
        wide = true;
        j += 2;
        continue;
      } else {
        transcode(s, start, key); // U+2028/9 or a lone surrogate
        return;
      }
    } else if (c >= 0x20 && ((SPECIAL_20_3F >>> (c - 0x20)) & 1) === 0) j++;
    else if (c === 0x22) break;
    else {
      transcode(s, start, key); // & < > raw, a control character, or end of input (NaN)
      return;
    }
    if (++run === LOOP_CHARS) {
      j = plainRunEnd(s, j);
      run = 0;
    }
  }
  literal.end = j + 1;
  literal.out = undefined;
  if (key) {
    literal.key = s.slice(start + 1, j);
    literal.wide = wide;
  }
}

/**
 * Transcodes a literal with escapes or characters Go escapes straight into Go's encoding: copy
 * runs of the input, patch only where Go's text differs (`\/`, `\u0041`, raw `<`, lone
 * surrogates …). Escapes Go writes the same way (`\n`, `\"`, `\u001f`, `\u003c`) stay in the run,
 * so a literal that is already canonical is still reported as such. Syntax errors are reported
 * at the same offsets as before the copy-through rewrite.
 */
function transcode(s: string, start: number, key: boolean): void {
  let i = start + 1;
  let out = "";
  let runStart = start;
  let escaped = false;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x22) break;
    if (Number.isNaN(c)) throw jsonError(s, i, "unterminated string");
    if (c < 0x20) throw jsonError(s, i, "control character in string");
    let patch: string;
    let next: number;
    if (c === 0x5c) {
      escaped = true;
      const e = s.charCodeAt(i + 1);
      if (e === 0x22 || e === 0x5c || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
        i += 2; // \" \\ \b \f \n \r \t: Go writes these escapes the same way
        continue;
      }
      if (e === 0x2f) {
        patch = "/";
        next = i + 2;
      } else if (e === 0x75) {
        const r = hex4(s, i + 2);
        if (r < 0) throw jsonError(s, i, "invalid \\u escape");
        next = i + 6;
        if (r >= 0xd800 && r <= 0xdfff) {
          // Go: a valid high+low escape pair is one code point; anything else is U+FFFD and the
          // following escape (if any) is decoded on its own.
          const r2 = s.charCodeAt(next) === 0x5c && s.charCodeAt(next + 1) === 0x75 ? hex4(s, next + 2) : -1;
          if (r <= 0xdbff && r2 >= 0xdc00 && r2 <= 0xdfff) {
            patch = String.fromCharCode(r, r2);
            next += 6;
          } else {
            patch = REPLACEMENT;
          }
        } else {
          patch = goUnit(r);
          // Go's own escape with lowercase hex (`\u001f`, `\u003c`, `\u2028`) is already canonical.
          if (patch.length === 6 && s.startsWith(patch, i)) {
            i = next;
            continue;
          }
        }
      } else {
        throw jsonError(s, i, "invalid escape");
      }
    } else if (c < 0x80) {
      if (ASCII_PLAIN[c] === 1) {
        i = plainRunEnd(s, i + 1);
        continue;
      }
      patch = goUnit(c); // raw < > &
      next = i + 1;
    } else if (c === 0x2028 || c === 0x2029) {
      patch = goUnit(c);
      next = i + 1;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && isLow(s.charCodeAt(i + 1))) {
        i += 2;
        continue;
      }
      patch = REPLACEMENT; // a raw lone surrogate (e.g. from a bad decode), like invalid UTF-8 in Go
      next = i + 1;
    } else {
      i = plainRunEnd(s, i + 1);
      continue;
    }
    out += s.slice(runStart, i) + patch;
    runStart = next;
    i = next;
  }
  literal.end = i + 1;
  literal.out = runStart === start ? undefined : out + s.slice(runStart, i + 1);
  if (key) {
    const raw = s.slice(start + 1, i);
    const decoded = escaped ? decodeEscaped(s, start + 1, i) : runStart === start ? raw : toWellFormed(raw);
    literal.key = decoded;
    literal.wide = hasWide(decoded);
  }
}

/** Decodes the validated literal body s[from, to) (escapes resolved, lone surrogates → U+FFFD). */
function decodeEscaped(s: string, from: number, to: number): string {
  let out = "";
  let runStart = from;
  let i = from;
  while (i < to) {
    if (s.charCodeAt(i) !== 0x5c) {
      i++;
      continue;
    }
    // Raw lone surrogates next to an escape are replaced on their own, as transcode does.
    if (i > runStart) out += toWellFormed(s.slice(runStart, i));
    const e = s.charCodeAt(i + 1);
    if (e === 0x75) {
      const r = hex4(s, i + 2);
      i += 6;
      if (r >= 0xd800 && r <= 0xdfff) {
        const r2 = s.charCodeAt(i) === 0x5c && s.charCodeAt(i + 1) === 0x75 ? hex4(s, i + 2) : -1;
        if (r <= 0xdbff && r2 >= 0xdc00 && r2 <= 0xdfff) {
          out += String.fromCharCode(r, r2);
          i += 6;
        } else out += REPLACEMENT;
      } else out += String.fromCharCode(r);
    } else {
      out += simpleEscape(e);
      i += 2;
    }
    runStart = i;
  }
  if (to > runStart) out += toWellFormed(s.slice(runStart, to));
  return out;
}

/** Decoded character of a one-letter escape, by the letter's code unit (already validated). */
function simpleEscape(e: number): string {
  switch (e) {
    case 0x62:
      return "\b";
    case 0x66:
      return "\f";
    case 0x6e:
      return "\n";
    case 0x72:
      return "\r";
    case 0x74:
      return "\t";
    default:
      return String.fromCharCode(e); // " \ /
  }
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
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
