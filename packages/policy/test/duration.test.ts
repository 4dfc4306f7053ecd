import { describe, expect, it } from "vitest";
import { DurationSyntaxError, parseGoDuration } from "../src/index.js";

/** [input, milliseconds] — Go 1.26 `time.ParseDuration` results divided by 1e6. */
const VALID: [string, number][] = [
  ["0", 0],
  ["-0", 0],
  ["+0", 0],
  ["1s", 1000],
  ["300ms", 300],
  ["1.5h", 5_400_000],
  ["1h30m", 5_400_000],
  ["2m3.5s", 123_500],
  ["10us", 0.01],
  ["10\u00b5s", 0.01],
  ["10\u03bcs", 0.01],
  ["5ns", 0.000005],
  [".5s", 500],
  ["5.s", 5000],
  ["1.s", 1000],
  ["-1s", -1000],
  ["+5m", 300_000],
  ["00001s", 1000],
  ["1.0000000001h", 3_600_000.00036],
  ["3.000000001s", 3000.000001],
  ["0.1ns", 0],
  ["1.999999999999999999999999s", 2000],
];

/** Inputs Go rejects. */
const INVALID = ["", ".s", "1", "1x", "1h-1m", "1d", "1hour", "1h 30m", "1e3s", "9223372036854775808ns"];

describe("parseGoDuration", () => {
  it.each(VALID)("%j → %d ms", (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each(INVALID)("%j is rejected", (text) => {
    expect(() => parseGoDuration(text)).toThrow(DurationSyntaxError);
  });

  it("accepts the int64 extremes and rejects one past them", () => {
    expect(parseGoDuration("9223372036854775807ns")).toBeCloseTo(9_223_372_036_854.775, 2);
    expect(parseGoDuration("-9223372036854775808ns")).toBeCloseTo(-9_223_372_036_854.775, 2);
    expect(parseGoDuration("2562047h47m16.854775807s")).toBeCloseTo(9_223_372_036_854.775, 2);
    expect(() => parseGoDuration("2562047h47m16.854775808s")).toThrow(/invalid duration/);
  });

  it("messages mirror Go's", () => {
    expect(() => parseGoDuration("30")).toThrow('time: missing unit in duration "30"');
    expect(() => parseGoDuration("3d")).toThrow('time: unknown unit "d" in duration "3d"');
    expect(() => parseGoDuration("x")).toThrow('time: invalid duration "x"');
  });
});
