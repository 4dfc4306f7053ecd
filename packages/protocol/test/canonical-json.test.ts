import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  argsHashFromText,
  canonicalJsonText,
  compareUtf8,
  encodeGoString,
  ValidationError,
} from "../src/index.js";

const bytes = (...b: number[]) => Uint8Array.from(b);
const ascii = (s: string) => [...Buffer.from(s, "latin1")];

describe("canonicalJsonText edge cases", () => {
  it("orders astral keys after U+E000–U+FFFF (UTF-8 byte order, not UTF-16)", () => {
    // UTF-16: "\u{1F600}" (0xD83D…) < "\uE000"; UTF-8: F0 9F… > EE 80 80.
    expect(canonicalJsonText('{"\u{1F600}":1,"\uE000":2,"\uFFFF":3,"\uD7FF":4}')).toBe(
      '{"\uD7FF":4,"\uE000":2,"\uFFFF":3,"\u{1F600}":1}',
    );
    const keys = ["\u{10000}", "\uFFFD", "\uE000", "z", "\u{10FFFF}", "\uD7FF"];
    const byBytes = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...keys].sort(compareUtf8)).toEqual(byBytes);
  });

  it("replaces lone surrogates (escaped or raw) with U+FFFD", () => {
    expect(canonicalJsonText('"\\ud800"')).toBe('"\uFFFD"');
    expect(canonicalJsonText('"\\ud800\\u0041"')).toBe('"\uFFFDA"');
    expect(canonicalJsonText('"\\ud800\\ud800\\udc00"')).toBe('"\uFFFD\u{10000}"');
    expect(canonicalJsonText('"\\udc00\\ud800"')).toBe('"\uFFFD\uFFFD"');
    expect(canonicalJsonText('"\\ud83d\\ude00x"')).toBe('"\u{1F600}x"');
    // Raw lone surrogates in a JS string (no escapes, and next to escapes).
    expect(canonicalJsonText('"a\uD800b"')).toBe('"a\uFFFDb"');
    expect(canonicalJsonText('"\uD83D\\n"')).toBe('"\uFFFD\\n"');
    expect(canonicalJsonText('"\\ud83d\uDE00"')).toBe('"\uFFFD\uFFFD"');
    expect(canonicalJsonText('{"\uDC00":1}')).toBe('{"\uFFFD":1}');
  });

  it("decodes invalid UTF-8 bytes one U+FFFD per byte, like Go", () => {
    const q = 0x22;
    // A truncated 3-byte sequence E2 82 then 'A': Go gives two U+FFFD (WHATWG would give one).
    expect(canonicalJsonText(bytes(q, 0xe2, 0x82, 0x41, q))).toBe('"\uFFFD\uFFFDA"');
    // Encoded surrogate (ED A0 80) and overlong (C0 AF) are invalid byte by byte.
    expect(canonicalJsonText(bytes(q, 0xed, 0xa0, 0x80, q))).toBe('"\uFFFD\uFFFD\uFFFD"');
    expect(canonicalJsonText(bytes(q, 0xc0, 0xaf, q))).toBe('"\uFFFD\uFFFD"');
    expect(canonicalJsonText(bytes(q, 0xff, q))).toBe('"\uFFFD"');
    expect(canonicalJsonText(bytes(q, 0xf4, 0x90, 0x80, 0x80, q))).toBe('"\uFFFD\uFFFD\uFFFD\uFFFD"');
    // Valid multi-byte sequences survive next to invalid ones.
    expect(canonicalJsonText(bytes(q, 0xc3, 0xa9, 0x80, 0xf0, 0x9f, 0x98, 0x80, q))).toBe(
      '"é\uFFFD\u{1F600}"',
    );
    // Key made of invalid bytes.
    expect(canonicalJsonText(bytes(0x7b, q, 0xfe, q, 0x3a, 0x31, 0x7d))).toBe('{"\uFFFD":1}');
    // Invalid bytes outside strings are a syntax error.
    expect(() => canonicalJsonText(bytes(0x5b, 0xff, 0x5d))).toThrow(ValidationError);
  });

  it("rejects a BOM, like Go", () => {
    expect(() => canonicalJsonText(bytes(0xef, 0xbb, 0xbf, ...ascii("{}")))).toThrow(ValidationError);
    expect(() => canonicalJsonText("\uFEFF{}")).toThrow(ValidationError);
  });

  it("escapes like Go encoding/json", () => {
    expect(canonicalJsonText('"\\u007f\\u0080\\u00ff"')).toBe('"\u007f\u0080\u00ff"');
    expect(encodeGoString('\b\f\n\r\t\u0001\u001f<>&\u2028\u2029"\\/')).toBe(
      '"\\b\\f\\n\\r\\t\\u0001\\u001f\\u003c\\u003e\\u0026\\u2028\\u2029\\"\\\\/"',
    );
    expect(encodeGoString("\u000b")).toBe('"\\u000b"');
    expect(encodeGoString("\u001a")).toBe('"\\u001a"');
  });

  it("keeps number literals and nesting", () => {
    expect(canonicalJsonText("[-0.0e-0, 1E+400, 123456789012345678901234567890.5]")).toBe(
      "[-0.0e-0,1E+400,123456789012345678901234567890.5]",
    );
    expect(canonicalJsonText('{"b":{"d":1,"c":[{"f":1,"e":2}]},"a":[]}')).toBe(
      '{"a":[],"b":{"c":[{"e":2,"f":1}],"d":1}}',
    );
  });

  it("sorts keys after decoding escapes, with the last duplicate winning", () => {
    expect(canonicalJsonText('{"b":1,"\\u0061":2,"a":3}')).toBe('{"a":3,"b":1}');
  });

  it.each([
    "{",
    "[1,]",
    '{"a":1,}',
    "01",
    "1.",
    ".5",
    "-",
    "+1",
    "1e",
    "NaN",
    "tru",
    "nul",
    '"\\x"',
    '"\\u12"',
    '"\\u12G4"',
    '"a\tb"',
    '"unterminated',
    "{} {}",
    "[1 2]",
    '{"a" 1}',
    "{1:2}",
    " ",
    "'a'",
  ])("rejects %j", (text) => {
    expect(() => canonicalJsonText(text)).toThrow(ValidationError);
    expect(() => canonicalJsonText(text)).toThrow(/^invalid JSON: /);
  });

  it("treats empty input as null and bounds depth like Go (10 000)", () => {
    expect(canonicalJsonText("")).toBe("null");
    expect(canonicalJsonText(new Uint8Array())).toBe("null");
    expect(argsHashFromText(undefined)).toBe(argsHashFromText("null"));
    expect(argsHashFromText(" \n null \t")).toBe(createHash("sha256").update("null").digest("hex"));
    const ok = "[".repeat(10_000) + "]".repeat(10_000);
    expect(canonicalJsonText(ok)).toBe(ok);
    const deep = "[".repeat(10_001) + "]".repeat(10_001);
    expect(() => canonicalJsonText(deep)).toThrow(/exceeded max depth/);
    expect(() => canonicalJsonText("[[1]]", { maxDepth: 1 })).toThrow(ValidationError);
    const hostile = "[".repeat(300_000);
    expect(() => canonicalJsonText(hostile, { maxDepth: 1_000_000 })).toThrow(ValidationError);
  });
});
