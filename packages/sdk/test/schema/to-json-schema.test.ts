import { ConfigurationError } from "@rebuno/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as zm from "zod/mini";
import { z as z3 } from "zod3";
import { schemaKind, toJsonSchema } from "../../src/schema/index.js";

const DRAFT = "https://json-schema.org/draft/2020-12/schema";

describe("toJsonSchema", () => {
  it("converts zod 4 through Standard JSON Schema, input side", () => {
    const schema = z.object({
      city: z.string().describe("City name"),
      days: z.number().int().min(1).default(3),
      units: z.enum(["c", "f"]).optional(),
    });
    expect(schemaKind(schema)).toBe("standard-json-schema");
    const json = toJsonSchema(schema);
    expect(json.$schema).toBe(DRAFT);
    expect(json.type).toBe("object");
    expect(json.properties).toMatchObject({
      city: { type: "string", description: "City name" },
      days: { type: "integer", minimum: 1, default: 3 },
      units: { enum: ["c", "f"] },
    });
    // Input side: a defaulted field is optional for the caller.
    expect(json.required).toEqual(["city"]);
  });

  it("converts zod 4 mini (no Standard JSON Schema) with zod's own converter", () => {
    const schema = zm.object({ q: zm.string(), limit: zm.optional(zm.number()) });
    expect(schemaKind(schema)).toBe("zod4");
    const json = toJsonSchema(schema);
    expect(json).toMatchObject({
      $schema: DRAFT,
      type: "object",
      properties: { q: { type: "string" }, limit: { type: "number" } },
      required: ["q"],
    });
  });

  it("converts zod 3 with zod-to-json-schema and upgrades it to 2020-12", () => {
    const point = z3.object({ x: z3.number(), y: z3.number() });
    const schema = z3.object({
      name: z3.string().min(2),
      tags: z3.array(z3.string()).optional(),
      pair: z3.tuple([z3.string(), z3.number()]),
      from: point,
      to: point,
    });
    expect(schemaKind(schema)).toBe("zod3");
    const json = toJsonSchema(schema);
    expect(json.$schema).toBe(DRAFT);
    expect(json.required).toEqual(["name", "pair", "from", "to"]);
    const props = json.properties as Record<string, Record<string, unknown>>;
    expect(props.name).toMatchObject({ type: "string", minLength: 2 });
    // draft-07 tuple `items: [...]` becomes `prefixItems`.
    expect(props.pair!.prefixItems).toEqual([{ type: "string" }, { type: "number" }]);
    expect(Array.isArray(props.pair!.items)).toBe(false);
    // $refStrategy "none": the reused object is inlined, never a "#/properties/from" pointer.
    expect(props.to).toEqual(props.from);
    expect(JSON.stringify(json)).not.toContain("$ref");
  });

  it("accepts a plain JSON Schema object and copies it", () => {
    const raw = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
    const json = toJsonSchema(raw);
    expect(json).toEqual({ $schema: DRAFT, ...raw });
    (json.properties as Record<string, unknown>).id = null;
    expect(raw.properties.id).toEqual({ type: "string" });
  });

  it("keeps a hand-written dialect marker", () => {
    const raw = { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: {} };
    expect(toJsonSchema(raw).$schema).toBe("http://json-schema.org/draft-07/schema#");
  });

  it("refuses non-object roots for every schema form", () => {
    expect(() => toJsonSchema(z.string())).toThrow(/object root.*z\.object/);
    expect(() => toJsonSchema(z3.array(z3.string()))).toThrow(ConfigurationError);
    expect(() => toJsonSchema({ type: "string" })).toThrow(/type "string"/);
    expect(() => toJsonSchema({ properties: {} })).toThrow(/no type/);
    expect(() => toJsonSchema(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]))).toThrow(
      ConfigurationError,
    );
  });

  it("wraps converter failures in ConfigurationError with the cause", () => {
    let caught: unknown;
    try {
      toJsonSchema(z.object({ when: z.date() }));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect((caught as Error).message).toMatch(/cannot convert the standard-json-schema schema/);
    expect((caught as Error).cause).toBeInstanceOf(Error);
  });

  it("refuses a Standard Schema that cannot produce JSON Schema", () => {
    const opaque = { "~standard": { version: 1, vendor: "acme", validate: (v: unknown) => ({ value: v }) } };
    expect(() => toJsonSchema(opaque as never)).toThrow(/'acme' schema does not expose JSON Schema/);
  });

  it("refuses non-objects", () => {
    expect(() => toJsonSchema(null as never)).toThrow(/got null/);
    expect(() => toJsonSchema("x" as never)).toThrow(/got string/);
  });
});
