import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod3";
import { fromJsonSchema, validateJsonSchema, validateWith } from "../../src/schema/index.js";

const order = {
  type: "object",
  properties: {
    sku: { type: "string", pattern: "^[A-Z]{3}-\\d+$" },
    qty: { type: "integer", minimum: 1, maximum: 10 },
    note: { type: ["string", "null"], maxLength: 5 },
    mode: { enum: ["air", "sea"] },
    lines: { type: "array", items: { $ref: "#/$defs/line" }, minItems: 1 },
    kind: { anyOf: [{ const: "a" }, { type: "number" }] },
  },
  required: ["sku", "qty"],
  additionalProperties: false,
  $defs: { line: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
};

describe("validateJsonSchema", () => {
  it("accepts a valid value", () => {
    expect(
      validateJsonSchema(order, {
        sku: "ABC-1",
        qty: 2,
        note: null,
        mode: "sea",
        lines: [{ n: 1 }],
        kind: 3,
      }),
    ).toEqual([]);
  });

  it("reports each problem with its path", () => {
    const issues = validateJsonSchema(order, {
      sku: "abc",
      qty: 11,
      note: "toolong",
      mode: "rail",
      lines: [{}],
      kind: "b",
      extra: true,
    });
    const byPath = Object.fromEntries(issues.map((i) => [i.path.join("."), i.message]));
    expect(byPath).toEqual({
      sku: "must match /^[A-Z]{3}-\\d+$/",
      qty: "must be <= 10",
      note: "must have at most 5 characters",
      mode: 'must be one of ["air","sea"]',
      "lines.0.n": "required",
      kind: "does not match any allowed shape (anyOf)",
      extra: "unexpected property 'extra'",
    });
  });

  it("reports missing required fields and type mismatches", () => {
    expect(validateJsonSchema(order, { qty: 1.5 })).toEqual([
      { message: "required", path: ["sku"] },
      { message: "expected integer, got number", path: ["qty"] },
    ]);
    expect(validateJsonSchema(order, [])).toEqual([{ message: "expected object, got array", path: [] }]);
  });

  it("checks record-style additionalProperties and oneOf exclusivity", () => {
    const schema = {
      type: "object",
      additionalProperties: { type: "number" },
      properties: { x: { oneOf: [{ type: "number" }, { type: "integer" }] } },
    };
    expect(validateJsonSchema(schema, { a: 1, b: "2" })).toEqual([
      { message: "expected number, got string", path: ["b"] },
    ]);
    expect(validateJsonSchema(schema, { x: 2 })).toEqual([
      { message: "matches more than one oneOf branch", path: ["x"] },
    ]);
    expect(validateJsonSchema(schema, { x: 2.5 })).toEqual([]);
  });

  it("stops on recursive references instead of overflowing the stack", () => {
    const loop = {
      type: "object",
      $defs: { a: { $ref: "#/$defs/a" } },
      properties: { v: { $ref: "#/$defs/a" } },
    };
    const issues = validateJsonSchema(loop, { v: 1 });
    expect(issues[0]?.message).toMatch(/too deep/);
  });
});

describe("validateWith", () => {
  it("uses zod 4's own validation (and its transforms)", async () => {
    const schema = z.object({ n: z.string().transform(Number) });
    expect(await validateWith(schema, { n: "42" })).toEqual({ value: { n: 42 } });
    const bad = await validateWith(schema, { n: 1 });
    expect(bad.issues?.[0]?.path).toEqual(["n"]);
  });

  it("uses zod 3's Standard Schema", async () => {
    const schema = z3.object({ n: z3.number() });
    expect(await validateWith(schema, { n: 1 })).toEqual({ value: { n: 1 } });
    expect((await validateWith(schema, { n: "1" })).issues).toHaveLength(1);
  });

  it("validates raw JSON Schema", async () => {
    expect(await validateWith(order, { sku: "ABC-1", qty: 1 })).toEqual({ value: { sku: "ABC-1", qty: 1 } });
    expect((await validateWith(order, { sku: "ABC-1" })).issues).toEqual([
      { message: "required", path: ["qty"] },
    ]);
  });
});

describe("fromJsonSchema", () => {
  it("is a Standard Schema with the JSON Schema extension", async () => {
    const std = fromJsonSchema(order);
    expect(std["~standard"].vendor).toBe("rebuno");
    expect(await std["~standard"].validate({ sku: "ABC-1", qty: 1 })).toEqual({
      value: { sku: "ABC-1", qty: 1 },
    });
    expect(await std["~standard"].validate({})).toHaveProperty("issues");
    const copy = std["~standard"].jsonSchema?.input({ target: "draft-2020-12" });
    expect(copy).toEqual(order);
    expect(copy).not.toBe(order); // consumers may mutate what they get
    const draft7 = std["~standard"].jsonSchema?.input({ target: "draft-07" });
    expect(draft7).not.toHaveProperty("$schema");
    expect(draft7).toMatchObject({ type: "object", required: ["sku", "qty"] });
  });
});
