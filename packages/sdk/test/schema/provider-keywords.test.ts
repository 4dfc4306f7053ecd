/**
 * What providers receive contains only keywords they accept (#10): no `$schema` anywhere (a
 * wrapTool JSON Schema used to gain one), and strict outputs only use their dialect's keywords.
 */
import {
  ANTHROPIC_STRICT_DIALECT,
  OPENAI_STRICT_DIALECT,
  toAnthropicTools,
  toGeminiTools,
  toOpenAITools,
  toVercelTools,
  wrapTool,
} from "@rebuno/sdk";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const plain = wrapTool({
  name: "weather",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  invoke: (args: { city: string }) => args.city,
});
const dialected = wrapTool({
  name: "forecast",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      // A property *named* $schema is data, not a keyword: it must survive.
      $schema: { type: "string" },
      days: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "integer", minimum: 1 },
    },
    required: ["days"],
  },
  invoke: (args: { days: number }) => args.days,
});
const zodTool = wrapTool({
  name: "lookup",
  inputSchema: z.object({ sku: z.string(), qty: z.number().int().optional() }),
  invoke: (args: { sku: string }) => args.sku,
});
const tools = [plain, dialected, zodTool];

const STRUCTURAL = [
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "const",
  "description",
  "format",
  "$ref",
  "$defs",
];

/** Every keyword used in a schema position (property names are not keywords). */
function keywords(schema: unknown, out: Set<string> = new Set()): Set<string> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return out;
  for (const [key, value] of Object.entries(schema)) {
    out.add(key);
    if (key === "properties" || key === "$defs") {
      for (const sub of Object.values(value as object)) keywords(sub, out);
    } else if (key === "items" || key === "additionalProperties" || key === "not") {
      keywords(value, out);
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf" || key === "prefixItems") {
      for (const sub of value as unknown[]) keywords(sub, out);
    }
  }
  return out;
}

describe("provider output carries only accepted keywords", () => {
  it("tool.inputSchema, what frameworks read, has no $schema at any depth; property names are kept", () => {
    for (const t of tools) expect(keywords(t.inputSchema).has("$schema")).toBe(false);
    expect(Object.keys(dialected.inputSchema.properties as object)).toEqual(["$schema", "days"]);
  });

  it("OpenAI and Anthropic strict: only their dialect's keywords", () => {
    const openai = toOpenAITools(tools).map((t) => t.function.parameters);
    const responses = toOpenAITools(tools, { api: "responses" }).map((t) => t.parameters);
    const anthropic = toAnthropicTools(tools, { strict: true }).map((t) => t.input_schema);
    for (const [schemas, dialect] of [
      [openai, OPENAI_STRICT_DIALECT],
      [responses, OPENAI_STRICT_DIALECT],
      [anthropic, ANTHROPIC_STRICT_DIALECT],
    ] as const) {
      const allowed = new Set([...STRUCTURAL, ...dialect.keep]);
      for (const schema of schemas) {
        expect([...keywords(schema)].filter((k) => !allowed.has(k))).toEqual([]);
      }
    }
  });

  it("non-strict OpenAI, Anthropic, Gemini (both forms) and the Vercel AI SDK: no $schema", () => {
    const outputs: unknown[] = [
      ...toOpenAITools(tools, { strict: false }).map((t) => t.function.parameters),
      ...toAnthropicTools(tools).map((t) => t.input_schema),
      ...toGeminiTools(tools, { schema: "json-schema" }).flatMap((t) =>
        t.functionDeclarations.map((d) => d.parametersJsonSchema),
      ),
      ...toGeminiTools(tools).flatMap((t) => t.functionDeclarations.map((d) => d.parameters)),
    ];
    const standard = toVercelTools(tools);
    for (const v of Object.values(standard)) {
      const convert = v.inputSchema["~standard"] as unknown as {
        jsonSchema: { input(o: { target: string }): unknown };
      };
      for (const target of ["draft-2020-12", "draft-07", "openapi-3.0"]) {
        outputs.push(convert.jsonSchema.input({ target }));
      }
    }
    const ai5 = toVercelTools(tools, { jsonSchema: (schema) => schema });
    outputs.push(...Object.values(ai5).map((v) => v.inputSchema));
    expect(outputs).toHaveLength(tools.length * 8);
    for (const schema of outputs) expect(keywords(schema).has("$schema")).toBe(false);
  });
});
