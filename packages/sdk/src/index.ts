/**
 * @rebuno/sdk: decorated toolboxes, tools, agents, steps, subagents, resources.
 *
 * The polyfill import comes first so `Symbol.metadata` exists before any decorated class that
 * imports this package is evaluated.
 */
import "./polyfill.js";

export {
  APIError,
  Blocked,
  CheckpointUnavailable,
  ConfigurationError,
  ConflictError,
  ForbiddenError,
  failureReason,
  InternalError,
  KernelError,
  LeaseSuperseded,
  NetworkError,
  NotFoundError,
  PolicyError,
  RateLimited,
  RebunoError,
  Terminated,
  TimeoutError,
  ToolError,
  type ToolErrorReason,
  TransportError,
  UnauthorizedError,
  ValidationError,
} from "@rebuno/protocol";
export {
  type AdapterOptions,
  type AiJsonSchemaHelper,
  type AiValidationResult,
  haltable,
  invokeTool,
  isControlFlowError,
  type LangChainToolConfig,
  type LangChainToolFactory,
  type LangChainToolsOptions,
  type MastraLegacyExecuteOptions,
  type MastraToolContext,
  type MastraToolDefinition,
  type MastraToolsOptions,
  type McpCallToolResult,
  type McpLowLevelServer,
  type McpRequestExtra,
  type McpToolDefinition,
  type OpenAIAgentsCallDetails,
  type OpenAIAgentsToolConfig,
  type OpenAIAgentsToolFactory,
  type OpenAIAgentsToolsOptions,
  registerMcpTools,
  resultText,
  toLangChainTools,
  toMastraTools,
  toMcpTools,
  toOpenAIAgentsTools,
  toVercelTools,
  type VercelTool,
  type VercelToolCallOptions,
  type VercelToolsOptions,
} from "./adapters/index.js";
export { Agent, type AgentHandler, type AgentOptions } from "./agent/agent.js";
export { type AgentClassConfig, agent } from "./agent/agent-decorator.js";
export { raiseForRefusal, refusalFromError } from "./agent/refusal.js";
export {
  WEBHOOK_REJECTION_CAUSES,
  type WebhookRejection,
  type WebhookRejectionCause,
} from "./agent/rejections.js";
export { Result } from "./agent/result.js";
export { DEFAULT_SERVE_HOST, type ServeHandle, type ServeOptions } from "./agent/serve.js";
export { MAX_WEBHOOK_BYTES } from "./agent/webhook.js";
export { createRebunoFetch, type RebunoFetchOptions, rebunoFetch } from "./llm/rebuno-fetch.js";
export type { LlmRecord } from "./llm/record.js";
export {
  contentText,
  flattenMcpResult,
  type McpCall,
  type McpCallResult,
  type McpClientLike,
  type McpRebunoTool,
  type McpToolDescriptor,
  type PerTool,
  throwIfMcpError,
  type WrapMcpDescriptorsOptions,
  type WrapMcpToolsOptions,
  wrapMcpTool,
  wrapMcpTools,
} from "./mcp/index.js";
export { METADATA_SYMBOL } from "./polyfill.js";
export {
  ExecutionContext,
  type ExecutionContextInit,
  execution,
  previous,
} from "./runtime/context.js";
export type {
  CaptureFailureRef,
  CaptureRef,
  CaptureSet,
  KernelPort,
  LeaseRef,
  RegisterResourceBody,
  ResourceViewLike,
  StepDecisionLike,
  StepLike,
  StepResourceRef,
  SubmitStepBody,
} from "./runtime/kernel-port.js";
export { consoleLogger, type Logger } from "./runtime/logger.js";
export { type OffloadFunction, type OffloadOptions, offload } from "./runtime/offload.js";
export { type ResourceOptions, resource } from "./runtime/resource.js";
export type { CheckpointPolicy, ResourceDriver } from "./runtime/resource-types.js";
export { type StepOptions, step } from "./runtime/step.js";
export { type SubagentClient, type SubagentOptions, subagent } from "./runtime/subagent.js";
// Provider schemas, framework exporters and MCP wrapping (owned by the schema/adapters/mcp work).
export {
  ANTHROPIC_STRICT_DIALECT,
  ANTHROPIC_STRICT_LIMITS,
  type AnthropicInputSchema,
  type AnthropicTool,
  type AnthropicToolsOptions,
  assignToolNames,
  checkAnthropicBudgets,
  checkOpenAIBudgets,
  collectTools,
  compileStrictSchema,
  DRAFT_2020_12,
  fromJsonSchema,
  type GeminiFunctionDeclaration,
  type GeminiTool,
  type GeminiToolsOptions,
  type JsonSchemaIssue,
  makeNullable,
  OPENAI_STRICT_DIALECT,
  OPENAI_STRICT_LIMITS,
  type OpenAIChatTool,
  type OpenAIResponsesTool,
  type OpenAIToolsOptions,
  type SanitizeToolNameOptions,
  type SchemaKind,
  type SchemaSource,
  type StrictDialect,
  sanitizeToolName,
  schemaKind,
  stripStrictNulls,
  TOOL_NAME_PATTERN,
  type ToolSource,
  toAnthropicStrictSchema,
  toAnthropicTools,
  toGeminiSchema,
  toGeminiTools,
  toJsonSchema,
  toOpenAIStrictSchema,
  toOpenAITools,
  validateJsonSchema,
  validateWith,
} from "./schema/index.js";
export type { StandardSchemaV1 } from "./standard-schema.js";
export {
  type CallKind,
  type CallSpec,
  type DenialFormatter,
  defaultDenialFormatter,
  TOOL_ID_PATTERN,
  type ToolSpec,
} from "./tool-spec.js";
export type { Idempotency, JsonSchema, RebunoTool, ToolCallOptions } from "./tool-types.js";
export {
  TOOLS_METADATA_KEY,
  type ToolDecorator,
  type ToolMeta,
  type ToolMethod,
  type ToolOptions,
  tool,
} from "./tools/decorator.js";
export {
  type CallableTool,
  defineTool,
  type ToolDefinition,
  type WrapToolDefinition,
  wrapTool,
} from "./tools/define-tool.js";
export { Toolbox, toolboxMetadata } from "./tools/toolbox.js";
