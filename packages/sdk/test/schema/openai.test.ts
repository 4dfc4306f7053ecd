import { ConfigurationError } from "@rebuno/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod3";
import {
  OPENAI_STRICT_DIALECT,
  stripStrictNulls,
  toJsonSchema,
  toOpenAIStrictSchema,
  toOpenAITools,
} from "../../src/schema/index.js";
import { makeTool, subschemas } from "./fixtures.js";

/** The OpenAI strict contract, checked on every subschema. */
function expectStrict(schema: Record<string, unknown>): void {
  expect(schema.type).toBe("object");
  expect(schema).not.toHaveProperty("anyOf");
  for (const [path, node] of subschemas(schema)) {
    for (const banned of [
      "oneOf",
      "allOf",
      "not",
      "if",
      "$schema",
      "minLength",
      "maxLength",
      "default",
      "const",
    ]) {
      expect(node, `${path} has ${banned}`).not.toHaveProperty(banned);
    }
    if (node.type === "object" || (Array.isArray(node.type) && node.type.includes("object"))) {
      expect(node.additionalProperties, path).toBe(false);
      expect(node.required, path).toEqual(Object.keys(node.properties as object));
    }
    if (typeof node.format === "string")
      expect(OPENAI_STRICT_DIALECT.formats.has(node.format), path).toBe(true);
  }
}

const zod4Input = z.object({
  query: z.string().min(2).describe("What to search"),
  limit: z.number().int().positive().optional(),
  email: z.email().nullable(),
  sort: z.enum(["asc", "desc"]).default("asc"),
  filter: z
    .object({ tag: z.string(), since: z.iso.date().optional() })
    .optional()
    .describe("Optional filter"),
  target: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("user"), id: z.string() }),
    z.object({ kind: z.literal("team"), slug: z.string() }),
  ]),
  ids: z.array(z.uuid()).max(5),
});

describe("toOpenAIStrictSchema", () => {
  it("compiles zod 4 to the strict subset", () => {
    const out = toOpenAIStrictSchema(zod4Input);
    expectStrict(out);
    const p = out.properties as Record<string, Record<string, unknown>>;
    // Required stays as is; optional → nullable; defaults and length limits move into the description.
    expect(p.query).toEqual({ type: "string", description: "What to search (minLength: 2)" });
    expect(p.limit!.type).toEqual(["integer", "null"]);
    // zod's nullable is already an anyOf with null; its long email regex is dropped for the format.
    expect(p.email).toEqual({ anyOf: [{ type: "string", format: "email" }, { type: "null" }] });
    expect(p.sort).toEqual({
      type: ["string", "null"],
      enum: ["asc", "desc", null],
      description: '(default: "asc")',
    });
    expect(p.filter!.description).toBe("Optional filter");
    expect(p.filter!.anyOf).toEqual([
      {
        type: "object",
        properties: { tag: { type: "string" }, since: { type: ["string", "null"], format: "date" } },
        required: ["tag", "since"],
        additionalProperties: false,
      },
      { type: "null" },
    ]);
    // discriminatedUnion's oneOf becomes anyOf; const becomes a one-value enum.
    const branches = p.target!.anyOf as Array<Record<string, Record<string, unknown>>>;
    expect(branches.map((b) => b.properties!.kind)).toEqual([
      { type: "string", enum: ["user"] },
      { type: "string", enum: ["team"] },
    ]);
    expect(p.ids).toEqual({ type: "array", maxItems: 5, items: { type: "string", format: "uuid" } });
  });

  it("compiles zod 3 and raw JSON Schema the same way", () => {
    const z3Out = toOpenAIStrictSchema(
      z3.object({ a: z3.string(), b: z3.number().optional(), c: z3.object({ d: z3.boolean().optional() }) }),
    );
    expectStrict(z3Out);
    expect(z3Out.required).toEqual(["a", "b", "c"]);
    const raw = toOpenAIStrictSchema({
      type: "object",
      properties: { n: { type: "integer", minimum: 0 }, list: { type: "array", items: { type: "string" } } },
      required: ["n"],
    });
    expectStrict(raw);
    expect(raw.properties).toEqual({
      n: { type: "integer", minimum: 0 },
      list: { anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] },
    });
  });

  it("keeps $defs and recursion, rewriting draft-07 definitions", () => {
    const out = toOpenAIStrictSchema({
      type: "object",
      properties: { root: { $ref: "#/definitions/node" } },
      required: ["root"],
      definitions: {
        node: {
          type: "object",
          properties: {
            value: { type: "string" },
            children: { type: "array", items: { $ref: "#/definitions/node" } },
          },
          required: ["value"],
        },
      },
    });
    expectStrict(out);
    expect(out.properties).toEqual({ root: { $ref: "#/$defs/node" } });
    const node = (out.$defs as Record<string, Record<string, unknown>>).node!;
    expect(node.required).toEqual(["value", "children"]);
    expect((node.properties as Record<string, unknown>).children).toEqual({
      anyOf: [{ type: "array", items: { $ref: "#/$defs/node" } }, { type: "null" }],
    });
  });

  it("closes loose objects but refuses open records and free-form values", () => {
    expectStrict(toOpenAIStrictSchema(z.looseObject({ a: z.string() })));
    expect(() => toOpenAIStrictSchema(z.object({ m: z.record(z.string(), z.number()) }))).toThrow(
      /at #\/properties\/m: open records/,
    );
    expect(() => toOpenAIStrictSchema(z.object({ x: z.any() }))).toThrow(
      /at #\/properties\/x: accepts any JSON value/,
    );
    expect(() => toOpenAIStrictSchema({ type: "object", properties: { o: { type: "object" } } })).toThrow(
      /free-form objects/,
    );
    expect(() => toOpenAIStrictSchema(z.object({ t: z.tuple([z.string(), z.number()]) }))).toThrow(
      /'prefixItems'/,
    );
    expect(() =>
      toOpenAIStrictSchema({
        type: "object",
        properties: { both: { allOf: [{ type: "string" }, { minLength: 1 }] } },
      }),
    ).toThrow(/at #\/properties\/both: 'allOf' is not supported/);
    expect(() =>
      toOpenAIStrictSchema({ type: "object", properties: { r: { $ref: "https://example.com/s.json" } } }),
    ).toThrow(ConfigurationError);
  });

  it("enforces OpenAI's size budgets", () => {
    const wide = Object.fromEntries(Array.from({ length: 5001 }, (_, i) => [`p${i}`, { type: "string" }]));
    expect(() => toOpenAIStrictSchema({ type: "object", properties: wide })).toThrow(/5001 properties/);
    let deep: Record<string, unknown> = { type: "object", properties: { leaf: { type: "string" } } };
    for (let i = 0; i < 10; i++) deep = { type: "object", properties: { n: deep } };
    expect(() => toOpenAIStrictSchema(deep)).toThrow(/11 levels of object nesting/);
    const values = Array.from({ length: 1001 }, (_, i) => `v${i}`);
    expect(() => toOpenAIStrictSchema({ type: "object", properties: { e: { enum: values } } })).toThrow(
      /1001 enum values/,
    );
  });

  it("does not modify its input", () => {
    const raw = { type: "object", properties: { a: { type: "string" } } };
    const copy = structuredClone(raw);
    toOpenAIStrictSchema(raw);
    expect(raw).toEqual(copy);
  });
});

describe("toOpenAITools", () => {
  const tools = [
    makeTool("search", zod4Input, () => "ok"),
    makeTool("lookup", z3.object({ id: z3.string() }), () => "ok"),
    makeTool("raw.tool", { type: "object", properties: { q: { type: "string" } } }, () => "ok"),
  ];

  it("emits Chat Completions tools with sanitised names", () => {
    const out = toOpenAITools(tools);
    expect(out.map((t) => t.function.name)).toEqual(["search", "lookup", "raw_tool"]);
    for (const t of out) {
      expect(t.type).toBe("function");
      expect(t.function.strict).toBe(true);
      expectStrict(t.function.parameters);
    }
    expect(out[1]!.function.description).toBe("lookup tool");
  });

  it("emits Responses API tools and non-strict schemas on request", () => {
    const out = toOpenAITools(tools, { api: "responses", strict: false });
    expect(out[2]).toEqual({
      type: "function",
      name: "raw_tool",
      description: "raw.tool tool",
      parameters: { type: "object", properties: { q: { type: "string" } } },
      strict: false,
    });
  });

  it("accepts a toolbox-like object and names the failing tool", () => {
    const bad = makeTool("bag", z.object({ m: z.record(z.string(), z.string()) }), () => "x");
    expect(() => toOpenAITools({ tools: [bad] })).toThrow(/^tool 'bag': OpenAI strict schema/);
    expect(toOpenAITools({ tools: [bad] }, { strict: false })).toHaveLength(1);
  });

  it("refuses name collisions after sanitising", () => {
    const a = makeTool("a.b", { type: "object", properties: {} }, () => 1);
    const b = makeTool("a/b", { type: "object", properties: {} }, () => 1);
    expect(() => toOpenAITools([a, b])).toThrow(/'a.b' and 'a\/b' both become 'a_b'/);
  });
});

describe("stripStrictNulls", () => {
  it("drops nulls the strict rewrite introduced, at any depth, and keeps real nulls", () => {
    const canonical = toJsonSchema(zod4Input);
    const fromModel = {
      query: "qq",
      limit: null,
      email: null,
      sort: null,
      filter: { tag: "t", since: null },
      target: { kind: "user", id: "u" },
      ids: [],
    };
    const args = stripStrictNulls(canonical, fromModel);
    expect(args).toEqual({
      query: "qq",
      email: null,
      filter: { tag: "t" },
      target: { kind: "user", id: "u" },
      ids: [],
    });
    // The result now passes the original zod schema, defaults applied.
    expect(zod4Input.parse(args)).toMatchObject({ sort: "asc", filter: { tag: "t" } });
    expect(fromModel.limit).toBeNull();
  });

  it("follows $refs into arrays of objects", () => {
    const schema = {
      type: "object",
      properties: { rows: { type: "array", items: { $ref: "#/$defs/row" } } },
      required: ["rows"],
      $defs: { row: { type: "object", properties: { a: { type: "string" } } } },
    };
    expect(stripStrictNulls(schema, { rows: [{ a: null }, { a: "x" }] })).toEqual({ rows: [{}, { a: "x" }] });
  });
});
