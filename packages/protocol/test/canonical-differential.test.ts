// Differential tests: the value walker (canonicalJson) and the copy-through text canonicalizer
// (canonicalJsonText) against the previous implementation (reference-canonical.ts), on seeded
// random values and texts, valid and invalid. Outputs must be identical; errors must have the
// same class and message.
import { describe, expect, it } from "vitest";
import { canonicalJson, canonicalJsonText, RawJson } from "../src/index.js";
import { referenceCanonicalText, referenceCanonicalValue } from "./reference-canonical.js";

/** mulberry32: small seeded PRNG so a failure reproduces from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)]!;

// Code units that matter to Go's encoder or to UTF-8 ordering, plus plain ones.
const UNITS: readonly string[] = [
  ..."abcxyzABZ019 _-.:/",
  '"',
  "\\",
  "<",
  ">",
  "&",
  "\u0000",
  "\b",
  "\f",
  "\n",
  "\r",
  "\t",
  "\u000b",
  "\u001f",
  "\u007f",
  "\u0080",
  "é",
  "ß",
  "\u00ff",
  "東",
  "\u2027",
  "\u2028",
  "\u2029",
  "\u202a",
  "\ud7ff",
  "\ue000",
  "\uff01",
  "\ufffd",
  "\uffff",
  "\u{1f600}",
  "\u{10000}",
  "\u{10ffff}",
  "\ud800", // lone high
  "\udbff",
  "\udc00", // lone low
  "\udfff",
];

function randString(r: Rand, max = 8): string {
  const n = int(r, max + 1);
  let s = "";
  const plainOnly = r() < 0.5; // half the strings need no escaping (the fast paths)
  for (let k = 0; k < n; k++) s += plainOnly ? pick(r, ["a", "b", "z", "0", " ", "é", "東"]) : pick(r, UNITS);
  return s;
}

const NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.1,
  0.1 + 0.2,
  1.25,
  -1.5e300,
  1e21,
  1e20,
  1e-6,
  1e-7,
  123456789012345680000,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 63,
  -(2 ** 31),
  Number.EPSILON,
];

function randNumber(r: Rand): number {
  const k = r();
  if (k < 0.4) return pick(r, NUMBERS);
  if (k < 0.7) return int(r, 2000) - 1000;
  if (k < 0.85) return (r() - 0.5) * 10 ** int(r, 40);
  // Random bit patterns: any finite double.
  const buf = new DataView(new ArrayBuffer(8));
  buf.setUint32(0, int(r, 2 ** 32));
  buf.setUint32(4, int(r, 2 ** 32));
  const x = buf.getFloat64(0);
  return Number.isFinite(x) ? x : 0;
}

function randValue(r: Rand, depth: number): unknown {
  const k = r();
  if (depth > 4 || k < 0.45) {
    const s = r();
    if (s < 0.4) return randString(r);
    if (s < 0.75) return randNumber(r);
    if (s < 0.85) return r() < 0.5;
    if (s < 0.95) return null;
    return new RawJson(randText(r, depth + 1, false));
  }
  if (k < 0.55 && depth < 3 && r() < 0.3) return randTable(r, depth);
  if (k < 0.7) {
    const n = int(r, 6);
    const a: unknown[] = [];
    for (let i = 0; i < n; i++) a.push(randValue(r, depth + 1));
    return a;
  }
  const o: Record<string, unknown> = r() < 0.1 ? Object.create(null) : {};
  const n = int(r, 8);
  for (let i = 0; i < n; i++) {
    const key = r() < 0.15 ? String(int(r, 20)) : randString(r, 4);
    const value = r() < 0.05 ? undefined : randValue(r, depth + 1);
    // defineProperty, so a "__proto__" key is an own property as JSON.parse would make it.
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  }
  if (r() < 0.05) Object.defineProperty(o, "__proto__", { value: 1, enumerable: true });
  return o;
}

/**
 * Rows sharing a key list (the walker reuses the sorted keys of the previous object at the same
 * depth): same keys in the same or another insertion order, some values undefined, extra keys.
 */
function randTable(r: Rand, depth: number): unknown[] {
  const keys = Array.from({ length: 1 + int(r, 6) }, () =>
    r() < 0.2 ? String(int(r, 12)) : randString(r, 3),
  );
  const rows: unknown[] = [];
  for (let i = int(r, 6); i >= 0; i--) {
    const order = r() < 0.7 ? keys : [...keys].reverse();
    const row: Record<string, unknown> = {};
    for (const key of order) {
      const value = r() < 0.1 ? undefined : randValue(r, depth + 2);
      Object.defineProperty(row, key, { value, enumerable: true, writable: true, configurable: true });
    }
    if (r() < 0.15) row[randString(r, 2)] = 1;
    rows.push(r() < 0.2 ? { wrap: row } : row);
  }
  return rows;
}

// ---- random JSON text ------------------------------------------------------------------------

const WS = [" ", "\n", "\r", "\t", "  "];
const ws = (r: Rand, spaced: boolean) => (spaced && r() < 0.3 ? pick(r, WS) : "");

function randNumberLiteral(r: Rand): string {
  if (r() < 0.3) return JSON.stringify(randNumber(r));
  let s = r() < 0.3 ? "-" : "";
  s += r() < 0.3 ? "0" : String(1 + int(r, 9)) + "0123456789".slice(0, int(r, 25));
  if (r() < 0.4) s += `.${"0".repeat(int(r, 3))}${int(r, 1000)}`;
  if (r() < 0.3) s += `${pick(r, ["e", "E"])}${pick(r, ["", "+", "-"])}${int(r, 400)}`;
  return s;
}

/** A string literal spelled in one of the many ways JSON allows. */
function randStringLiteral(r: Rand): string {
  const s = randString(r);
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    const style = r();
    if (c < 0x20 || ch === '"' || ch === "\\" || (style < 0.3 && c < 0x10000)) {
      const simple: Record<string, string> = {
        '"': '\\"',
        "\\": "\\\\",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "/": "\\/",
      };
      const hex = c.toString(16).padStart(4, "0");
      out +=
        simple[ch] !== undefined && style < 0.6 ? simple[ch] : `\\u${style < 0.8 ? hex : hex.toUpperCase()}`;
    } else if (c >= 0x10000 && style < 0.3) {
      out += [...ch]
        .map((_, i) => `\\u${ch.charCodeAt(i).toString(16)}`)
        .join("")
        .replace(/\\u([0-9a-f]+)\\u([0-9a-f]+)/, (_, hi: string, lo: string) => `\\u${hi}\\u${lo}`);
    } else {
      out += ch;
    }
  }
  if (r() < 0.05) out += pick(r, ["\\ud800", "\\udc00", "\\ud83d\\ude00", "\\ud800\\u0041"]);
  return `${out}"`;
}

function randText(r: Rand, depth: number, spaced: boolean): string {
  const k = r();
  if (depth > 4 || k < 0.45) {
    const s = r();
    if (s < 0.4) return randStringLiteral(r);
    if (s < 0.8) return randNumberLiteral(r);
    return pick(r, ["true", "false", "null"]);
  }
  const n = int(r, 6);
  const items: string[] = [];
  if (k < 0.7) {
    for (let i = 0; i < n; i++) items.push(ws(r, spaced) + randText(r, depth + 1, spaced) + ws(r, spaced));
    return `[${items.join(",")}${n === 0 ? ws(r, spaced) : ""}]`;
  }
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = keys.length > 0 && r() < 0.1 ? pick(r, keys) : randStringLiteral(r); // duplicates
    keys.push(key);
    items.push(
      `${ws(r, spaced)}${key}${ws(r, spaced)}:${ws(r, spaced)}${randText(r, depth + 1, spaced)}${ws(r, spaced)}`,
    );
  }
  return `{${items.join(",")}${n === 0 ? ws(r, spaced) : ""}}`;
}

/** Outcome of a call as comparable data: the result, or the error's class and message. */
function outcome(f: () => string): { ok: string } | { error: string; message: string } {
  try {
    return { ok: f() };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message };
  }
}

const SEEDS = 40;
const PER_SEED = 100;

describe("canonicalJson (value walker) against the text path", () => {
  it.each(Array.from({ length: SEEDS }, (_, i) => i + 1))("random values, seed %i", (seed) => {
    const r = rng(seed);
    for (let k = 0; k < PER_SEED; k++) {
      const v = randValue(r, 0);
      expect(outcome(() => canonicalJson(v))).toEqual(outcome(() => referenceCanonicalValue(v)));
    }
  });

  it("reuses sorted keys only for objects with the same key list", () => {
    const rows = [
      { b: 1, a: 2 },
      { b: 3, a: undefined },
      { b: 4, a: 5, c: 6 },
      { a: 7, b: 8 },
      { b: 9, a: 10 },
      { "\u{1F600}": 1, "\uE000": 2 },
      { b: undefined, a: undefined },
      {},
      { b: 11, a: 12 },
    ];
    const want =
      '[{"a":2,"b":1},{"b":3},{"a":5,"b":4,"c":6},{"a":7,"b":8},{"a":10,"b":9},' +
      '{"\uE000":2,"\u{1F600}":1},{},{},{"a":12,"b":11}]';
    expect(canonicalJson(rows)).toBe(want);
    expect(canonicalJson(rows)).toBe(want); // the second call starts from the first one's cache
    expect(canonicalJson({ x: rows, y: [rows] })).toBe(referenceCanonicalValue({ x: rows, y: [rows] }));
  });

  it("sorts keys by UTF-8 bytes, including astral against U+E000–U+FFFF", () => {
    const v = {
      "\u{1F600}": 1,
      "\uE000": 2,
      "\uFFFF": 3,
      "\uD7FF": 4,
      z: 5,
      "\u{10000}": [{ "\uFF01": 1, "\u{1F601}": 2 }],
    };
    expect(canonicalJson(v)).toBe(referenceCanonicalValue(v));
    expect(canonicalJson(v)).toBe(
      '{"z":5,"\uD7FF":4,"\uE000":2,"\uFFFF":3,"\u{10000}":[{"\uFF01":1,"\u{1F601}":2}],"\u{1F600}":1}',
    );
  });

  it("merges keys that differ only in lone surrogates, the later property winning", () => {
    const v = { "a\uD800": 1, b: 2, "a\uDC00": 3 };
    expect(canonicalJson(v)).toBe('{"a\uFFFD":3,"b":2}');
    expect(canonicalJson(v)).toBe(referenceCanonicalValue(v));
    const w = { "\uDFFF": [1], "\uFFFD": { "\uD83D": true } };
    expect(canonicalJson(w)).toBe(referenceCanonicalValue(w));
  });

  it("formats numbers like the text path, at float edges", () => {
    const v = [
      ...NUMBERS,
      5e-324,
      1.7976931348623157e308,
      Number("9007199254740993"),
      0.000001,
      1e-7,
      100,
      1e100,
    ];
    expect(canonicalJson(v)).toBe(referenceCanonicalValue(v));
    expect(canonicalJson([-0, 1e21, 2 ** 64])).toBe("[0,1e+21,18446744073709552000]");
  });

  it("escapes strings like Go, lone surrogates becoming U+FFFD", () => {
    const v = [
      "<a href='x'>&amp;</a>",
      "\u2028\u2029",
      "\b\f\n\r\t\u0000\u001f\u007f",
      '"\\/',
      "\uD800x",
      "x\uDFFF",
    ];
    expect(canonicalJson(v)).toBe(referenceCanonicalValue(v));
    expect(canonicalJson("\uD83D\uDE00\uD83D")).toBe('"\u{1F600}\uFFFD"');
  });

  it("canonicalizes RawJson leaves from their text, with the nesting budget left at their depth", () => {
    const v = { b: new RawJson('{ "z" : 1.0 , "a" : [1E+2, "\\u0041"] }'), a: [new RawJson("-0")] };
    expect(canonicalJson(v)).toBe('{"a":[-0],"b":{"a":[1E+2,"A"],"z":1.0}}');
    expect(canonicalJson(new RawJson(" 10e1 "))).toBe("10e1");
    // Invalid RawJson text (the constructor trusts it): the text path's error or result.
    for (const raw of ["{", "1,2", "1 2", " ", "[1,]"]) {
      const w = { x: [new RawJson(raw)] };
      expect(outcome(() => canonicalJson(w))).toEqual(outcome(() => referenceCanonicalValue(w)));
    }
    const deep = new RawJson("[".repeat(9_998) + "]".repeat(9_998));
    expect(outcome(() => canonicalJson([[deep]]))).toEqual(outcome(() => referenceCanonicalValue([[deep]])));
    expect(outcome(() => canonicalJson([[[deep]]]))).toEqual(
      outcome(() => referenceCanonicalValue([[[deep]]])),
    );
    expect(() => canonicalJson([[[deep]]])).toThrow(/exceeded max depth/);
  });

  it("throws the same errors as toWireJson, naming the path", () => {
    const cyclic: Record<string, unknown> = { a: { b: [1] } };
    (cyclic.a as Record<string, unknown>).self = cyclic;
    class Point {
      x = 1;
    }
    const holey = [1, 2, 3];
    delete holey[1];
    const bad: unknown[] = [
      { a: [1, { b: Number.NaN }] },
      { a: [1, undefined] },
      holey,
      { when: new Date(0) },
      { m: new Map() },
      { s: new Set([1]) },
      { p: new Point() },
      { f: () => 1 },
      { y: Symbol("y") },
      { n: 10n },
      { i: Number.POSITIVE_INFINITY },
      { u8: new Uint8Array(2) },
      { boxed: new String("x") },
      cyclic,
      { "key with space": { "\u00e9": [Number.NEGATIVE_INFINITY] } },
      Number.NaN,
      () => 1,
    ];
    for (const v of bad) {
      const got = outcome(() => canonicalJson(v));
      expect(got).toEqual(outcome(() => referenceCanonicalValue(v)));
      expect(got).toMatchObject({ error: "TypeError", message: expect.stringMatching(/^value/) });
    }
    expect(() => canonicalJson({ a: { b: [0, Number.NaN] } })).toThrow("value.a.b[1] is NaN");
  });

  it("takes the text path for deep nesting, with the same result or error", () => {
    for (const depth of [127, 128, 129, 300, 2_000]) {
      let v: unknown = { leaf: "<x>" };
      for (let d = 0; d < depth; d++) v = d % 2 === 0 ? [v] : { k: v, a: 1 };
      expect(outcome(() => canonicalJson(v))).toEqual(outcome(() => referenceCanonicalValue(v)));
    }
  });

  it("runs getters once per read and reports their errors like the text path", () => {
    const v = {
      get boom(): number {
        throw new Error("getter failed");
      },
    };
    expect(outcome(() => canonicalJson(v))).toEqual(outcome(() => referenceCanonicalValue(v)));
  });

  it("is re-entrant: a getter may canonicalize other values (sharing the key cache)", () => {
    const inner = [
      { b: 1, a: new RawJson('{"y":1,"x":[2.0]}') },
      { b: 2, a: 3 },
    ];
    const v = {
      rows: [
        { b: 1, a: 2 },
        {
          b: 3,
          get a(): string {
            return canonicalJson(inner) + canonicalJsonText('{"q":{"b":1,"a":2}}');
          },
        },
        { b: 4, a: 5 },
      ],
    };
    expect(canonicalJson(v)).toBe(referenceCanonicalValue(v));
  });

  it("ignores symbol keys and non-enumerable properties, like JSON.stringify", () => {
    const v: Record<string | symbol, unknown> = { b: 1, [Symbol("s")]: 2 };
    Object.defineProperty(v, "hidden", { value: 3, enumerable: false });
    expect(canonicalJson(v)).toBe('{"b":1}');
  });
});

describe("canonicalJsonText (copy-through) against the previous parser", () => {
  it.each(Array.from({ length: SEEDS }, (_, i) => i + 1))("random texts, seed %i", (seed) => {
    const r = rng(seed * 7919);
    for (let k = 0; k < PER_SEED; k++) {
      const text = randText(r, 0, r() < 0.5);
      const want = outcome(() => referenceCanonicalText(text));
      expect(
        outcome(() => canonicalJsonText(text)),
        text,
      ).toEqual(want);
      if ("ok" in want) {
        // The canonical form is a fixed point, and already-canonical input comes back unchanged.
        expect(canonicalJsonText(want.ok)).toBe(want.ok);
        const bytes = Buffer.from(text, "utf8");
        expect(canonicalJsonText(bytes)).toBe(referenceCanonicalText(bytes));
      }
    }
  });

  it.each(Array.from({ length: SEEDS }, (_, i) => i + 1))(
    "mutated (mostly invalid) texts, seed %i",
    (seed) => {
      const r = rng(seed * 104729);
      for (let k = 0; k < PER_SEED; k++) {
        let text = randText(r, 0, r() < 0.5);
        const edits = 1 + int(r, 3);
        for (let e = 0; e < edits; e++) {
          const at = int(r, text.length + 1);
          const op = r();
          const ch = pick(r, [
            '"',
            "\\",
            ",",
            ":",
            "[",
            "]",
            "{",
            "}",
            " ",
            "0",
            "-",
            "e",
            ".",
            "u",
            "\u0001",
            "x",
          ]);
          if (op < 0.33) text = text.slice(0, at) + text.slice(at + 1);
          else if (op < 0.66) text = text.slice(0, at) + ch + text.slice(at);
          else text = text.slice(0, at) + ch + text.slice(at + 1);
        }
        expect(
          outcome(() => canonicalJsonText(text)),
          text,
        ).toEqual(outcome(() => referenceCanonicalText(text)));
      }
    },
  );

  it("decodes invalid UTF-8 bytes like the previous parser", () => {
    const r = rng(99);
    const junk = [0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0x82, 0xed, 0xa0, 0xf0, 0xf4, 0x90, 0xfe, 0xff];
    for (let k = 0; k < 500; k++) {
      const text = randText(r, 2, false);
      const bytes = [...Buffer.from(text, "utf8")];
      for (let e = int(r, 3); e >= 0; e--) bytes.splice(int(r, bytes.length + 1), 0, pick(r, junk));
      const input = Uint8Array.from(bytes);
      expect(outcome(() => canonicalJsonText(input))).toEqual(outcome(() => referenceCanonicalText(input)));
    }
  });

  it("returns already-canonical input as the same string", () => {
    const text = '{"a":[1,2.50,{"b":"x\\n\\u003c\\u2028"}],"b":null,"c":"\u{1F600}"}';
    expect(canonicalJsonText(text)).toBe(text);
    expect(canonicalJsonText(` ${text}\n`)).toBe(text);
  });

  it("keeps Go's own escapes and rewrites the others", () => {
    const cases: [string, string][] = [
      ['"\\u001f\\u001F\\u003c\\u003C<"', '"\\u001f\\u001f\\u003c\\u003c\\u003c"'],
      ['"\\u0008\\u000c\\u000a\\u0022\\u005c\\/"', '"\\b\\f\\n\\"\\\\/"'],
      ['"\\u2028\u2028\\u2029\u2029"', '"\\u2028\\u2028\\u2029\\u2029"'],
      ['"\\u00e9\\u00E9é"', '"ééé"'],
      ['{"\\u0062":1,"a":2}', '{"a":2,"b":1}'],
      ['{"a\\n":1,"a":2}', '{"a":2,"a\\n":1}'],
      ['{"b":1,"a":2,"b":3}', '{"a":2,"b":3}'],
      ['{"a":1,"a":2}', '{"a":2}'],
    ];
    for (const [input, want] of cases) {
      expect(canonicalJsonText(input)).toBe(want);
      expect(referenceCanonicalText(input)).toBe(want);
    }
  });

  it("sorts many keys (the comparator sort) and wide keys like the previous parser", () => {
    const r = rng(5);
    for (let k = 0; k < 50; k++) {
      const keys = Array.from({ length: 10 + int(r, 40) }, () => JSON.stringify(randString(r, 3)));
      const text = `{${keys.map((key, i) => `${key}:${i}`).join(",")}}`;
      expect(canonicalJsonText(text)).toBe(referenceCanonicalText(text));
    }
  });
});
