/**
 * Schemas for tools: one canonical JSON Schema per tool, validation for every schema form, and
 * provider compilers (OpenAI strict, Anthropic, Gemini).
 */
export {
  ANTHROPIC_STRICT_DIALECT,
  ANTHROPIC_STRICT_LIMITS,
  type AnthropicInputSchema,
  type AnthropicTool,
  type AnthropicToolsOptions,
  checkAnthropicBudgets,
  toAnthropicStrictSchema,
  toAnthropicTools,
} from "./anthropic.js";
export {
  type GeminiFunctionDeclaration,
  type GeminiTool,
  type GeminiToolsOptions,
  toGeminiSchema,
  toGeminiTools,
} from "./gemini.js";
export {
  checkOpenAIBudgets,
  OPENAI_STRICT_DIALECT,
  OPENAI_STRICT_LIMITS,
  type OpenAIChatTool,
  type OpenAIResponsesTool,
  type OpenAIToolsOptions,
  stripStrictNulls,
  toOpenAIStrictSchema,
  toOpenAITools,
} from "./openai.js";
export { DRAFT_2020_12 } from "./schema-walk.js";
export { compileStrictSchema, makeNullable, type StrictDialect } from "./strict-compiler.js";
export { type SchemaKind, type SchemaSource, schemaKind, toJsonSchema } from "./to-json-schema.js";
export {
  assignToolNames,
  type SanitizeToolNameOptions,
  sanitizeToolName,
  TOOL_NAME_PATTERN,
} from "./tool-names.js";
export { collectTools, type ToolSource } from "./tool-source.js";
export { fromJsonSchema, type JsonSchemaIssue, validateJsonSchema, validateWith } from "./validate.js";
