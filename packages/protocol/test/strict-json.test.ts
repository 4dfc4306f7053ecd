import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  normalizeJson,
  parseJson,
  parseJsonObjectWithRaw,
  RawJson,
  stringifyJson,
  toWireJson,
  ValidationError,
} from "../src/index.js";

function wireError(value: unknown, root?: string): string {
  try {
    toWireJson(value, root);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  throw new Error("expected toWireJson to throw");
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe("toWireJson", () => {
  it("serializes plain data exactly like JSON.stringify", () => {
    const value = { a: 1, b: [true, null, "x", { c: -0.5 }], d: { e: "é<>&\u2028" }, "weird key": 1 };
    expect(toWireJson(value)).toBe(JSON.stringify(value));
    expect(toWireJson([])).toBe("[]");
    expect(toWireJson("s")).toBe('"s"');
    expect(toWireJson(null)).toBe("null");
    expect(toWireJson(Object.create(null))).toBe("{}");
  });

  it("drops undefined object properties and maps a root undefined to null", () => {
    expect(toWireJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(toWireJson(undefined)).toBe("null");
  });

  it.each([
    [{ items: [0, 1, { when: Number.NaN }] }, "args.items[2].when is NaN"],
    [{ n: Number.POSITIVE_INFINITY }, "args.n is Infinity"],
    [{ n: Number.NEGATIVE_INFINITY }, "args.n is -Infinity"],
    [{ list: [1, undefined] }, "args.list[1] is undefined; arrays cannot hold undefined"],
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is being tested.
    [{ list: [1, , 3] }, "args.list[1] is undefined"],
    [{ cb: () => 1 }, "args.cb is a function"],
    [{ s: Symbol("x") }, "args.s is a symbol"],
    [{ big: 10n }, "args.big is a BigInt"],
    [{ when: new Date(0) }, "args.when is a Date; pass date.toISOString()"],
    [{ m: new Map() }, "args.m is a Map"],
    [{ s: new Set([1]) }, "args.s is a Set"],
    [{ p: new Point(1, 2) }, "args.p is an instance of Point"],
    [{ bytes: new Uint8Array(2) }, "args.bytes is an instance of Uint8Array"],
    [{ boxed: new String("x") }, "args.boxed is an instance of String"],
    [{ err: new Error("x") }, "args.err is an instance of Error"],
    [{ "my-key": { "0": [Number.NaN] } }, 'args["my-key"]["0"][0] is NaN'],
    [Number.NaN, "args is NaN"],
    [() => 1, "args is a function"],
  ])("rejects %o", (value, message) => {
    expect(wireError(value, "args")).toContain(message);
  });

  it("uses `value` as the default root", () => {
    expect(wireError({ a: Number.NaN })).toMatch(/^value\.a is NaN/);
  });

  it("names cycles at their first repetition", () => {
    const a: Record<string, unknown> = { name: "a" };
    a.self = a;
    expect(wireError({ a }, "args")).toMatch(/^args\.a\.self is a circular reference to args\.a$/);
    const list: unknown[] = [1];
    list.push({ back: list });
    expect(wireError(list, "result")).toMatch(/^result\[1\]\.back is a circular reference to result$/);
  });

  it("accepts shared (non-circular) references", () => {
    const shared = { x: 1 };
    expect(toWireJson({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });

  it("handles deep (non-circular) nesting and reports absurd depth as a TypeError", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 1000; i++) deep = { d: deep };
    expect(JSON.parse(toWireJson(deep))).toEqual(deep);
    let absurd: unknown = 1;
    for (let i = 0; i < 200_000; i++) absurd = [absurd];
    expect(() => toWireJson(absurd)).toThrow(TypeError);
  });

  it("emits RawJson verbatim", () => {
    const raw = new RawJson('{"n":1.0,"big":100000000000000000000000}');
    expect(toWireJson({ result: raw, list: [raw, 2], skip: undefined })).toBe(
      '{"result":{"n":1.0,"big":100000000000000000000000},"list":[{"n":1.0,"big":100000000000000000000000},2]}',
    );
    expect(toWireJson(raw)).toBe(raw.text);
  });

  it("gives the same text and errors on either side of the quick plain-data check", () => {
    // The quick check stops 16 levels down and hands deeper values to the path-tracking walker.
    const nest = (depth: number, leaf: unknown): unknown => {
      let v = leaf;
      for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { k: v, u: undefined } : [v, null, "s"];
      return v;
    };
    for (const depth of [14, 15, 16, 17, 18, 40]) {
      const ok = nest(depth, { n: 1.5, t: true, z: Object.create(null) });
      expect(toWireJson(ok)).toBe(JSON.stringify(ok));
      expect(wireError(nest(depth, { bad: Number.NaN }), "v")).toMatch(/\.bad is NaN/);
      expect(toWireJson(nest(depth, new RawJson("1.0")))).toContain("1.0");
    }
    const withGetter = {
      get g() {
        return [1, 2];
      },
    };
    expect(toWireJson(withGetter)).toBe('{"g":[1,2]}');
  });

  it("accepts plain objects from another realm", async () => {
    const { runInNewContext } = await import("node:vm");
    const foreign = runInNewContext('({ a: [1, { b: "c" }] })');
    expect(toWireJson(foreign)).toBe('{"a":[1,{"b":"c"}]}');
  });
});

describe("normalizeJson", () => {
  it("returns what a replay returns", () => {
    expect(normalizeJson({ a: undefined, b: [1, "x"], c: new RawJson("1.0") })).toEqual({
      b: [1, "x"],
      c: 1,
    });
    expect(() => normalizeJson({ d: new Date() })).toThrow(TypeError);
  });
});

describe("stringifyJson", () => {
  it("behaves like JSON.stringify without RawJson", () => {
    const value = { a: undefined, b: [undefined, () => 1], c: new Date(0), d: Number.NaN };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
    expect(stringifyJson(undefined)).toBe("null");
  });

  it("emits RawJson verbatim, following JSON.stringify rules elsewhere", () => {
    const value = {
      step_id: "s",
      result: new RawJson("[1.0, 2]"),
      gone: undefined,
      at: new Date(0),
      list: [undefined, new RawJson("null")],
    };
    expect(stringifyJson(value)).toBe(
      '{"step_id":"s","result":[1.0, 2],"at":"1970-01-01T00:00:00.000Z","list":[null,null]}',
    );
  });

  it("lets foreign JSON.stringify see RawJson as its value", () => {
    expect(JSON.stringify({ r: new RawJson('{"a":1.0}') })).toBe('{"r":{"a":1}}');
  });

  it("still rejects cycles", () => {
    const a: Record<string, unknown> = { r: new RawJson("1") };
    a.self = a;
    expect(() => stringifyJson(a)).toThrow(TypeError);
  });
});

describe("RawJson", () => {
  it("validates with from() and detects instances", () => {
    expect(RawJson.from(" [1.0] ").text).toBe("[1.0]");
    expect(() => RawJson.from("{")).toThrow(ValidationError);
    expect(() => new RawJson("")).toThrow(TypeError);
    expect(RawJson.isInstance(new RawJson("1"))).toBe(true);
    expect(RawJson.isInstance({ text: "1" })).toBe(false);
    expect(new RawJson("[1]").parse()).toEqual([1]);
  });
});

describe("parseJson", () => {
  it("parses and bounds depth", () => {
    expect(parseJson('{"a":[1,2]}')).toEqual({ a: [1, 2] });
    expect(parseJson(Buffer.from('"caf\u00e9"'))).toBe("café");
    expect(parseJson("[".repeat(512) + "]".repeat(512))).toBeDefined();
    expect(() => parseJson("[".repeat(513) + "]".repeat(513))).toThrow(/nesting deeper than 512/);
    expect(() => parseJson("[[[1]]]", { maxDepth: 2 })).toThrow(ValidationError);
    expect(parseJson('["[[[[", "]]"]', { maxDepth: 1 })).toEqual(["[[[[", "]]"]);
    expect(parseJson('["\\"[[["]', { maxDepth: 1 })).toEqual(['"[[[']);
  });

  it("rejects hostile depth without crashing", () => {
    const text = "[".repeat(200_000) + "]".repeat(200_000);
    expect(() => parseJson(text)).toThrow(ValidationError);
  });

  it.each(["", "{", "[1,]", "{'a':1}", "NaN", '{"a":1} x', "\ufeff{}", "01"])("rejects %j", (text) => {
    expect(() => parseJson(text)).toThrow(ValidationError);
    expect(() => parseJson(text)).toThrow(/^invalid JSON: /);
  });
});

describe("parseJsonObjectWithRaw", () => {
  it("returns each top-level field's raw text", () => {
    const text =
      ' { "kind" : "tool_call", "args" : {"n": 1.0, "s": "}\\"]"} ,"big":100000000000000000000001,\n"t":true,"nil":null,"arr":[ 1.50 ] } ';
    const { value, raw } = parseJsonObjectWithRaw(text);
    expect(value.kind).toBe("tool_call");
    expect(raw).toEqual({
      kind: '"tool_call"',
      args: '{"n": 1.0, "s": "}\\"]"}',
      big: "100000000000000000000001",
      t: "true",
      nil: "null",
      arr: "[ 1.50 ]",
    });
  });

  it("keeps the last duplicate, decodes escaped keys and keeps __proto__ inert", () => {
    const { value, raw } = parseJsonObjectWithRaw('{"a":1,"a":2.0,"\\u0062":3,"__proto__":{"x":1}}');
    expect(raw.a).toBe("2.0");
    expect(value.a).toBe(2);
    expect(raw.b).toBe("3");
    expect(Object.hasOwn(raw, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(raw, "__proto__")?.value).toBe('{"x":1}');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("handles the empty object and rejects non-objects", () => {
    expect(parseJsonObjectWithRaw(" {} ")).toEqual({ value: {}, raw: {} });
    expect(() => parseJsonObjectWithRaw("[]")).toThrow(/expected an object/);
    expect(() => parseJsonObjectWithRaw("null")).toThrow(ValidationError);
    expect(() => parseJsonObjectWithRaw('{"a":}')).toThrow(ValidationError);
  });
});

describe("canonicalJson of values", () => {
  it("matches the kernel form of what toWireJson sends", () => {
    expect(canonicalJson({ b: 2, a: [1, "<&>"], c: undefined })).toBe(
      '{"a":[1,"\\u003c\\u0026\\u003e"],"b":2}',
    );
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson({ r: new RawJson('{"z":1.0,"a":1}') })).toBe('{"r":{"a":1,"z":1.0}}');
    expect(() => canonicalJson({ d: new Date() })).toThrow(TypeError);
  });
});
