import { parseJson } from "./parse-json.js";

const RAW_BRAND: unique symbol = Symbol.for("rebuno.raw-json") as never;

// While `stringifyJson` probes a value with the native JSON.stringify, RawJson.toJSON only records
// that raw text is present (see strict-json.ts). Outside a probe it behaves like the parsed value.
export const rawProbe = { active: false, seen: false };

/**
 * JSON text kept byte-exact (number literals such as `1.0` or `10^30`, key order, duplicates).
 * `toWireJson`, `stringifyJson` and `canonicalJson` emit/canonicalize `text` verbatim. The
 * constructor trusts its input (the dev kernel wraps text it already validated); use
 * {@link RawJson.from} for untrusted text.
 */
export class RawJson {
  static {
    Object.defineProperty(RawJson.prototype, RAW_BRAND, { value: true });
  }

  /** The JSON text, one complete JSON value. */
  readonly text: string;

  constructor(text: string) {
    if (typeof text !== "string" || text.length === 0) {
      throw new TypeError("RawJson text must be a non-empty JSON text");
    }
    this.text = text;
  }

  /** Wrap `text` after checking that it is one valid JSON value (`ValidationError` otherwise). */
  static from(text: string): RawJson {
    parseJson(text);
    return new RawJson(text.trim());
  }

  /** True for RawJson instances, also from another copy of this package. */
  static isInstance(value: unknown): value is RawJson {
    return (
      typeof value === "object" && value !== null && (value as { [RAW_BRAND]?: unknown })[RAW_BRAND] === true
    );
  }

  /** The parsed value (numbers become JS numbers). */
  parse(): unknown {
    return JSON.parse(this.text);
  }

  /** Lets a plain `JSON.stringify` of a structure holding RawJson produce the equivalent value. */
  toJSON(): unknown {
    if (rawProbe.active) {
      rawProbe.seen = true;
      return null;
    }
    return JSON.parse(this.text);
  }

  toString(): string {
    return this.text;
  }
}
