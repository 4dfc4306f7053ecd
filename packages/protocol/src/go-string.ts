// Go `encoding/json` string encoding and UTF-8 key order, shared by the text and value
// canonicalizers (canonical-text.ts, canonical-value.ts). docs/protocol.md §5.2 items 4 and 6.

/**
 * 1 for the ASCII code units Go writes as they are inside a JSON string; 0 for those it escapes
 * (controls, `"`, `\`, and the HTML-safe `<`, `>`, `&`). A table lookup beats a regex test on the
 * short strings (keys, ids) that dominate tool arguments.
 */
export const ASCII_PLAIN: Uint8Array = (() => {
  const t = new Uint8Array(128);
  for (let c = 0x20; c < 0x80; c++) t[c] = 1;
  t[0x22] = 0;
  t[0x5c] = 0;
  t[0x3c] = 0;
  t[0x3e] = 0;
  t[0x26] = 0;
  return t;
})();

const HEX = "0123456789abcdef";

/**
 * A run of code units Go writes unchanged inside a string, excluding U+D800 and above (surrogates
 * need pairing, and U+D800+ keys need compareUtf8). Irregexp scans such a run 3–4 × faster per
 * character than a charCodeAt loop, but a call costs about as much as ten characters of the loop,
 * so the scanners below hand a run to it only after a few plain characters.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const PLAIN_RUN = /[^"\\\u0000-\u001f<>&\u2028\u2029\ud800-\uffff]*/y;

/** Plain characters a scanner loop checks one by one before calling plainRunEnd. */
export const LOOP_CHARS = 8;

/** End of the run of plain code units (see PLAIN_RUN) starting at `from`. */
export function plainRunEnd(s: string, from: number): number {
  PLAIN_RUN.lastIndex = from;
  PLAIN_RUN.test(s);
  return PLAIN_RUN.lastIndex;
}

/** Go's escape for each ASCII code unit with `ASCII_PLAIN[c] === 0` ("" for the plain ones). */
const ASCII_ESCAPE: readonly string[] = (() => {
  const t: string[] = [];
  for (let c = 0; c < 0x80; c++) {
    if (ASCII_PLAIN[c] === 1) t.push("");
    else if (c === 0x22) t.push('\\"');
    else if (c === 0x5c) t.push("\\\\");
    else if (c === 0x08)
      t.push("\\b"); // Go ≥ 1.22; older Go and the July Python SDK wrote \u0008
    else if (c === 0x0c) t.push("\\f");
    else if (c === 0x0a) t.push("\\n");
    else if (c === 0x0d) t.push("\\r");
    else if (c === 0x09) t.push("\\t");
    else t.push(`\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`); // controls, < > &: lowercase hex
  }
  return t;
})();

// String.prototype.isWellFormed/toWellFormed exist on Node ≥ 20 but are not in the ES2023 typings.
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}
/** Lone surrogates → U+FFFD (what Go decodes an unpaired `\ud800` or invalid UTF-8 to). */
export const toWellFormed = (s: string): string => (s as unknown as WellFormed).toWellFormed();
export const isWellFormed = (s: string): boolean => (s as unknown as WellFormed).isWellFormed();

/**
 * Go's encoding of one decoded UTF-16 code unit that is not a surrogate: its escape when Go
 * escapes it, else the character itself.
 */
export function goUnit(r: number): string {
  if (r < 0x80) return ASCII_PLAIN[r] === 1 ? String.fromCharCode(r) : ASCII_ESCAPE[r]!;
  if (r === 0x2028) return "\\u2028";
  if (r === 0x2029) return "\\u2029";
  return String.fromCharCode(r);
}

/** Encode a well-formed string the way Go `encoding/json` does (HTML-safe, lowercase `\u00XX`). */
export function encodeGoString(str: string): string {
  const n = str.length;
  let k = 0;
  // Scan for the first code unit Go escapes; most strings have none and are only quoted.
  for (; k < n; k++) {
    const c = str.charCodeAt(k);
    if (c < 0x80 ? ASCII_PLAIN[c] === 0 : c === 0x2028 || c === 0x2029) break;
  }
  if (k === n) return `"${str}"`;
  let out = '"';
  let runStart = 0;
  for (; k < n; k++) {
    const c = str.charCodeAt(k);
    let esc: string;
    if (c < 0x80) {
      if (ASCII_PLAIN[c] === 1) continue;
      esc = ASCII_ESCAPE[c]!;
    } else if (c === 0x2028) esc = "\\u2028";
    else if (c === 0x2029) esc = "\\u2029";
    else continue;
    out += str.slice(runStart, k) + esc;
    runStart = k + 1;
  }
  return `${out + str.slice(runStart)}"`;
}

/**
 * Order strings by their UTF-8 bytes (= code point order). UTF-16 order differs only where both
 * strings have a code unit ≥ U+D800 at the first difference (a surrogate of an astral character
 * against U+E000–U+FFFF), so only that case is remapped. Callers that know neither string has a
 * code unit ≥ U+D800 compare with `<` instead.
 */
export function compareUtf8(a: string, b: string): number {
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

/** True when `s` has a code unit ≥ U+D800 (where UTF-16 and UTF-8 order can disagree). */
export function hasWide(s: string): boolean {
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) >= 0xd800) return true;
  return false;
}
