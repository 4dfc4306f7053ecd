import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod3";
import {
  toAnthropicStrictSchema,
  toAnthropicTools,
  toGeminiSchema,
  toGeminiTools,
} from "../../src/schema/index.js";
import { makeTool, subschemas } from "./fixtures.js";

const weather = z.object({
  city: z.string().min(1).max(80).describe("City"),
  days: z.number().int().min(1).max(14).optional(),
  unit: z.enum(["c", "f"]).nullable(),
  at: z.iso.datetime().optional(),
  kind: z.literal("forecast"),
  mode: z.union([z.literal(1), z.literal(2)]),
  tags: z.array(z.string()).min(2).default([]),
});

describe("toAnthropicTools", () => {
  it("passes schemas through without $schema when not strict", () => {
    const tools = [
      makeTool("weather", weather, () => "sunny"),
      makeTool("legacy", z3.object({ q: z3.string() }), () => "x"),
      makeTool("raw", { type: "object", properties: { a: { type: "number" } }, required: ["a"] }, () => 1),
    ];
    const out = toAnthropicTools(tools);
    expect(out.map((t) => t.name)).toEqual(["weather", "legacy", "raw"]);
    expect(out[2]).toEqual({
      name: "raw",
      description: "raw tool",
      input_schema: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
    });
    for (const t of out) {
      expect(t.input_schema).not.toHaveProperty("$schema");
      expect(t.input_schema.type).toBe("object");
      expect(t).not.toHaveProperty("strict");
    }
    expect(out[1]!.input_schema).toMatchObject({ properties: { q: { type: "string" } }, required: ["q"] });
  });

  it("compiles strict schemas: closed objects, optional stays optional, constraints described", () => {
    const [tool] = toAnthropicTools([makeTool("weather", weather, () => "")], { strict: true });
    expect(tool!.strict).toBe(true);
    const schema = tool!.input_schema;
    for (const [path, node] of subschemas(schema)) {
      if (node.type === "object") expect(node.additionalProperties, path).toBe(false);
      for (const k of ["minimum", "maximum", "minLength", "maxLength", "maxItems", "$schema"]) {
        expect(node, `${path}.${k}`).not.toHaveProperty(k);
      }
    }
    expect(schema.required).toEqual(["city", "unit", "kind", "mode"]);
    const p = schema.properties as Record<string, Record<string, unknown>>;
    expect(p.city).toEqual({ type: "string", description: "City (minLength: 1, maxLength: 80)" });
    expect(p.days!.description).toBe("(minimum: 1, maximum: 14)");
    expect(p.kind).toEqual({ type: "string", enum: ["forecast"] });
    // minItems above 1 is not in Anthropic's grammar: described, not enforced.
    expect(p.tags).toMatchObject({ type: "array", default: [], description: "(minItems: 2)" });
    expect(p.tags).not.toHaveProperty("minItems");
  });

  it("refuses recursion and budget overruns in strict mode", () => {
    const recursive = {
      type: "object",
      properties: { tree: { $ref: "#/$defs/t" } },
      $defs: { t: { type: "object", properties: { kids: { type: "array", items: { $ref: "#/$defs/t" } } } } },
    };
    expect(() => toAnthropicStrictSchema(recursive)).toThrow(/recursive schemas are not supported/);
    const manyOptional = Object.fromEntries(
      Array.from({ length: 25 }, (_, i) => [`o${i}`, { type: "string" }]),
    );
    const tool = makeTool("wide", { type: "object", properties: manyOptional }, () => 1);
    expect(() => toAnthropicTools([tool], { strict: true })).toThrow(
      /24 optional parameters per request, found 25/,
    );
    expect(toAnthropicTools([tool])).toHaveLength(1);
    const many = Array.from({ length: 21 }, (_, i) =>
      makeTool(`t${i}`, { type: "object", properties: {} }, () => i),
    );
    expect(() => toAnthropicTools(many, { strict: true })).toThrow(/at most 20 strict tools/);
    const unions = Object.fromEntries(
      Array.from({ length: 17 }, (_, i) => [`u${i}`, { type: ["string", "number"] }]),
    );
    const unionTool = makeTool(
      "u",
      { type: "object", properties: unions, required: Object.keys(unions) },
      () => 1,
    );
    expect(() => toAnthropicTools([unionTool], { strict: true })).toThrow(/16 parameters with anyOf/);
  });
});

describe("toGeminiTools", () => {
  it("produces the OpenAPI subset: uppercase types, nullable, string enums, no JSON-Schema-only keywords", () => {
    const [tool] = toGeminiTools([makeTool("weather", weather, () => "")]);
    const decl = tool!.functionDeclarations[0]!;
    expect(decl.name).toBe("weather");
    expect(decl).not.toHaveProperty("parametersJsonSchema");
    const params = decl.parameters!;
    for (const [path, node] of subschemas(params)) {
      for (const k of ["$schema", "additionalProperties", "const", "$ref", "$defs", "default", "oneOf"]) {
        expect(node, `${path}.${k}`).not.toHaveProperty(k);
      }
      if (node.type !== undefined)
        expect(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"]).toContain(node.type);
      if (node.anyOf !== undefined)
        expect(Object.keys(node).filter((k) => k !== "nullable")).toEqual(["anyOf"]);
    }
    expect(params.type).toBe("OBJECT");
    expect(params.required).toEqual(["city", "unit", "kind", "mode"]);
    expect(params.propertyOrdering).toEqual(["city", "days", "unit", "at", "kind", "mode", "tags"]);
    const p = params.properties as Record<string, Record<string, unknown>>;
    expect(p.city).toEqual({ type: "STRING", minLength: 1, maxLength: 80, description: "City" });
    expect(p.unit).toEqual({ type: "STRING", enum: ["c", "f"], nullable: true });
    expect(p.at).toMatchObject({ type: "STRING", format: "date-time" });
    expect(p.kind).toEqual({ type: "STRING", enum: ["forecast"] });
    // Numeric literal unions cannot be a Gemini enum; the values are described instead.
    expect(p.mode).toEqual({
      anyOf: [
        { type: "NUMBER", description: "(one of: 1)" },
        { type: "NUMBER", description: "(one of: 2)" },
      ],
    });
    expect(p.tags).toEqual({
      type: "ARRAY",
      minItems: 2,
      items: { type: "STRING" },
      description: "(default: [])",
    });
  });

  it("inlines $refs, maps type arrays to nullable, and handles zod 3", () => {
    const schema = toGeminiSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/pt", description: "A point" }, n: { type: ["integer", "null"] } },
      required: ["a", "ghost"],
      $defs: {
        pt: {
          type: "object",
          properties: { x: { type: "number" } },
          required: ["x"],
          additionalProperties: false,
        },
      },
    });
    expect(schema).toEqual({
      type: "OBJECT",
      properties: {
        a: {
          type: "OBJECT",
          properties: { x: { type: "NUMBER" } },
          required: ["x"],
          propertyOrdering: ["x"],
          description: "A point",
        },
        n: { type: "INTEGER", nullable: true },
      },
      required: ["a"], // "ghost" is not a declared property: Gemini would reject it
      propertyOrdering: ["a", "n"],
    });
    expect(toGeminiSchema(z3.object({ s: z3.string().optional() }))).toEqual({
      type: "OBJECT",
      properties: { s: { type: "STRING" } },
      propertyOrdering: ["s"],
    });
  });

  it("refuses what the subset cannot hold, and offers the JSON Schema field instead", () => {
    const rec = makeTool("rec", z.object({ m: z.record(z.string(), z.number()) }), () => 1);
    expect(() => toGeminiTools([rec])).toThrow(
      /tool 'rec': Gemini schema: at #\/properties\/m: objects without/,
    );
    const [json] = toGeminiTools([rec], { schema: "json-schema" });
    const decl = json!.functionDeclarations[0]!;
    expect(decl).not.toHaveProperty("parameters");
    expect(decl.parametersJsonSchema).toMatchObject({
      type: "object",
      properties: { m: { type: "object" } },
    });
    expect(decl.parametersJsonSchema).not.toHaveProperty("$schema");
    const loop = { type: "object", properties: { t: { $ref: "#" } } };
    expect(() => toGeminiSchema(loop)).toThrow(/recursive \$ref '#'/);
  });

  it("gives names a leading letter or underscore", () => {
    const [tool] = toGeminiTools([makeTool("3d-render", { type: "object", properties: {} }, () => 1)]);
    expect(tool!.functionDeclarations[0]).toEqual({
      name: "_3d-render",
      description: "3d-render tool",
      parameters: { type: "OBJECT" },
    });
  });
});
