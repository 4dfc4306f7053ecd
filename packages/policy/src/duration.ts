/**
 * Go `time.ParseDuration`, returning milliseconds.
 *
 * Bundles carry Go durations (`30s`, `1h30m`, `1.5h`, `300ms`, `2us`), and a bundle that the
 * production kernel accepts must mean the same interval here, so this follows Go's algorithm
 * closely: accumulation in integer nanoseconds with Go's int64 overflow checks, and fractional
 * parts converted through float64 exactly as Go does (`v += uint64(float64(f) * (float64(unit) /
 * scale))`).
 */

const NS_PER_MS = 1_000_000n;
const MAX_NS = 1n << 63n; // Go keeps the magnitude in a uint64 and compares against 1<<63.

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1_000n],
  ["\u00b5s", 1_000n], // U+00B5 micro sign
  ["\u03bcs", 1_000n], // U+03BC Greek small letter mu
  ["ms", 1_000_000n],
  ["s", 1_000_000_000n],
  ["m", 60_000_000_000n],
  ["h", 3_600_000_000_000n],
]);

/** Thrown by {@link parseGoDuration}; the message mirrors Go's `time: …` errors. */
export class DurationSyntaxError extends Error {
  static {
    DurationSyntaxError.prototype.name = "DurationSyntaxError";
  }
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";

/**
 * Parses a Go duration string such as `300ms`, `-1.5h` or `1h30m` into milliseconds (possibly
 * fractional, e.g. `1500us` → `1.5`).
 *
 * @throws DurationSyntaxError for anything `time.ParseDuration` would reject.
 */
export function parseGoDuration(text: string): number {
  const quoted = JSON.stringify(text);
  const invalid = (): never => {
    throw new DurationSyntaxError(`time: invalid duration ${quoted}`);
  };
  let s = text;
  let neg = false;
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  // Go special-cases a bare "0" (with optional sign): it is the only unit-less duration.
  if (s === "0") return 0;
  if (s === "") invalid();

  let total = 0n;
  while (s !== "") {
    // Integer part: [0-9]*
    let i = 0;
    let v = 0n;
    while (isDigit(s[i])) {
      v = v * 10n + BigInt(Number(s[i]));
      if (v > MAX_NS) invalid(); // Go's leadingInt overflow
      i += 1;
    }
    const pre = i > 0;
    s = s.slice(i);

    // Fraction: (\.[0-9]*)? — digits beyond what fits are dropped, as in Go's leadingFraction.
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s[0] === ".") {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (isDigit(s[j])) {
        if (!overflow) {
          if (f > (MAX_NS - 1n) / 10n) {
            overflow = true;
          } else {
            const y = f * 10n + BigInt(Number(s[j]));
            if (y > MAX_NS) {
              overflow = true;
            } else {
              f = y;
              scale *= 10;
            }
          }
        }
        j += 1;
      }
      post = j > 0;
      s = s.slice(j);
    }
    if (!pre && !post) invalid(); // e.g. ".s" or "-.s"

    // Unit: everything up to the next digit or '.'.
    let k = 0;
    while (k < s.length && s[k] !== "." && !isDigit(s[k])) k += 1;
    if (k === 0) throw new DurationSyntaxError(`time: missing unit in duration ${quoted}`);
    const unitText = s.slice(0, k);
    s = s.slice(k);
    const unit = UNITS.get(unitText);
    if (unit === undefined) {
      throw new DurationSyntaxError(`time: unknown unit ${JSON.stringify(unitText)} in duration ${quoted}`);
    }
    if (v > MAX_NS / unit) invalid();
    v *= unit;
    if (f > 0n) {
      // float64 is accurate enough for fractions of the largest unit (hours), as Go notes.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > MAX_NS) invalid();
    }
    total += v;
    if (total > MAX_NS) invalid();
  }
  if (!neg && total > MAX_NS - 1n) invalid();
  const signed = neg ? -total : total;
  // Split to keep full precision for large values before the final float division.
  return Number(signed / NS_PER_MS) + Number(signed % NS_PER_MS) / 1e6;
}
