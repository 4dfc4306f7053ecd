/**
 * Go `fmt.Sprintf("%v", x)` for values produced by Go's `json.Unmarshal` into `any`.
 *
 * The production kernel stringifies each policy argument this way before comparing it with
 * `equals` / `contains` / `one_of` / `regex` (docs/protocol.md §9.3), so a bundle written against the real
 * kernel only behaves the same here if we reproduce Go's output byte for byte. JSON decodes to a
 * closed set of Go types, which keeps this small:
 *
 * | JSON     | Go value          | `%v`                                   |
 * |----------|-------------------|----------------------------------------|
 * | string   | `string`          | as is                                  |
 * | boolean  | `bool`            | `true` / `false`                       |
 * | number   | `float64`         | `strconv.FormatFloat(f, 'g', -1, 64)`  |
 * | null     | `nil`             | `<nil>`                                |
 * | array    | `[]any`           | `[a b c]`                              |
 * | object   | `map[string]any`  | `map[k1:v1 k2:v2]`, keys sorted        |
 */

import { compareUtf8 } from "@rebuno/protocol";

/**
 * Formats a JSON-decoded value exactly like Go's `%v` verb would after `json.Unmarshal`.
 *
 * @param value - A value as returned by `JSON.parse` (anything else is formatted best-effort).
 */
export function formatGoValue(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  switch (typeof value) {
    case "string":
      return wellFormed(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return formatGoFloat(value);
    case "object":
      if (Array.isArray(value)) return `[${value.map(formatGoValue).join(" ")}]`;
      return formatGoMap(value as Record<string, unknown>);
    default:
      // Not reachable for JSON input; keep the function total rather than throwing mid-evaluation.
      return String(value);
  }
}

function formatGoMap(map: Record<string, unknown>): string {
  // Go's fmt sorts string keys with `<`, i.e. by UTF-8 bytes. JS `<` on strings compares UTF-16
  // code units and disagrees for astral vs. U+E000–U+FFFF keys, hence compareUtf8.
  const keys = Object.keys(map).sort(compareUtf8);
  return `map[${keys.map((k) => `${wellFormed(k)}:${formatGoValue(map[k])}`).join(" ")}]`;
}

const SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Go's `json.Unmarshal` turns an unpaired surrogate escape (`"\ud800"`) into U+FFFD, where
 * `JSON.parse` keeps it; patterns and comparisons must see what Go sees.
 */
function wellFormed(text: string): string {
  return SURROGATE.test(text) ? text.replace(LONE_SURROGATE, "\uFFFD") : text;
}

/**
 * Go `strconv.FormatFloat(f, 'g', -1, 64)`, which is what `%v` uses for `float64`.
 *
 * Both Go and JavaScript produce the shortest digit string that round-trips (ties resolved toward
 * the closer value), so we take JS's digits from `toExponential()` and only re-do the layout: Go's
 * shortest `%g` switches to exponent form when the decimal exponent is `< -4` or `>= 6` (the
 * precision-6 rule; JS's own `String(n)` switches only at 21), and writes at least two exponent
 * digits (`1e+06`, `1e-05`, `1e+100`).
 */
export function formatGoFloat(f: number): string {
  if (Number.isNaN(f)) return "NaN";
  if (f === Number.POSITIVE_INFINITY) return "+Inf";
  if (f === Number.NEGATIVE_INFINITY) return "-Inf";
  if (f === 0) return Object.is(f, -0) ? "-0" : "0";

  const neg = f < 0;
  const [mantissa = "", expText = "0"] = Math.abs(f).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exp = Number(expText);
  const sign = neg ? "-" : "";

  if (exp < -4 || exp >= 6) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const expAbs = Math.abs(exp);
    return `${sign}${digits[0]}${frac}e${exp < 0 ? "-" : "+"}${expAbs < 10 ? "0" : ""}${expAbs}`;
  }
  // Plain layout: `dp` is the position of the decimal point relative to the digit string.
  const dp = exp + 1;
  if (dp <= 0) return `${sign}0.${"0".repeat(-dp)}${digits}`;
  if (dp >= digits.length) return `${sign}${digits}${"0".repeat(dp - digits.length)}`;
  return `${sign}${digits.slice(0, dp)}.${digits.slice(dp)}`;
}
