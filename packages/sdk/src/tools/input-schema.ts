/**
 * Turns a tool's declared `input` (zod 3/4, any Standard Schema, or a raw JSON Schema) into the
 * validator the call path runs and the JSON Schema frameworks and providers read. Conversion is
 * delegated to the schema module's `toJsonSchema`; this is the only call site.
 */
import { ConfigurationError, RebunoError } from "@rebuno/protocol";
import { fromJsonSchema, toJsonSchema } from "../schema/index.js";
import { withoutDialect } from "../schema/schema-walk.js";
import type { StandardSchemaV1 } from "../standard-schema.js";
import { isStandardSchema } from "../tool-spec.js";
import type { JsonSchema } from "../tool-types.js";

/** The validator and the JSON Schema of a tool's input. */
export interface DescribedInput {
  readonly validator: StandardSchemaV1 | undefined;
  readonly jsonSchema: JsonSchema;
}

/** Schema of a tool declared without `input`: any object. */
const EMPTY_OBJECT_SCHEMA: JsonSchema = Object.freeze({ type: "object", properties: {} });

/**
 * Describes a tool input. Standard Schemas validate with their own library; a raw JSON Schema is
 * validated with the schema module's JSON Schema checker, so every declared input is enforced
 * before anything is submitted.
 */
export function describeInput(input: unknown, where: string): DescribedInput {
  if (input === undefined) return { validator: undefined, jsonSchema: EMPTY_OBJECT_SCHEMA };
  if (typeof input !== "object" && typeof input !== "function") {
    throw new ConfigurationError(
      `${where}: input must be a zod schema, another Standard Schema, or a JSON Schema`,
    );
  }
  let jsonSchema: JsonSchema;
  try {
    // What frameworks read and hand to providers: draft 2020-12 by definition, and without
    // `$schema` anywhere, because strict provider modes reject keywords they do not document.
    jsonSchema = withoutDialect(toJsonSchema(input as JsonSchema));
  } catch (cause) {
    const detail = RebunoError.isInstance(cause) || cause instanceof Error ? cause.message : String(cause);
    throw new ConfigurationError(`${where}: ${detail}`, { cause });
  }
  const validator = isStandardSchema(input) ? input : fromJsonSchema(jsonSchema);
  return { validator, jsonSchema };
}
