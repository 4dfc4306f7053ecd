/**
 * Character-set tables and code point helpers for the RE2 translator (regex.ts): RE2's ASCII
 * Perl and POSIX classes, Go's Unicode category names, and emission of `u`-mode JS class text.
 */

/** Inclusive code point range. */
export type Range = readonly [number, number];

/** Largest Unicode code point. */
export const MAX_CP = 0x10ffff;

// ASCII sets used by RE2's Perl and POSIX classes (Go regexp/syntax perl_groups.go).
export const PERL: Readonly<Record<string, readonly Range[]>> = {
  d: [[0x30, 0x39]],
  s: [
    [0x09, 0x0a],
    [0x0c, 0x0d],
    [0x20, 0x20],
  ],
  w: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
};

export const POSIX: Readonly<Record<string, readonly Range[]>> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: PERL.w as readonly Range[],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

// Go's unicode.Categories. Everything else after \p is looked up as a script.
export const CATEGORIES = new Set(
  "C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs".split(
    " ",
  ),
);

export const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
export const isOctal = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x37;
export const isAlnum = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
export const hexVal = (c: number | undefined): number => {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
};

/** Emits one code point so it is literal in `u`-mode JS, both inside and outside a class. */
export function lit(cp: number): string {
  return isAlnum(cp) ? String.fromCodePoint(cp) : `\\u{${cp.toString(16)}}`;
}

export function rangesText(ranges: readonly Range[]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? lit(lo) : `${lit(lo)}-${lit(hi)}`)).join("");
}

/** Complement of sorted, non-overlapping ranges within [0, U+10FFFF]. */
export function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

/** True if case-insensitive matching could change what the range matches. */
export function rangeHasCase([lo, hi]: Range): boolean {
  // The first cased code point beyond ASCII letters is U+00B5 (micro sign).
  return (lo <= 0x5a && hi >= 0x41) || (lo <= 0x7a && hi >= 0x61) || hi >= 0xb5;
}

export function cpHasCase(cp: number): boolean {
  const ch = String.fromCodePoint(cp);
  return ch.toLowerCase() !== ch || ch.toUpperCase() !== ch;
}
