/**
 * Export Rebuno tools to agent frameworks: Vercel AI SDK, LangChain.js, Mastra, OpenAI Agents
 * SDK and MCP servers. Every exporter is a thin shim over `tool.execute`, so kernel recording,
 * policy and idempotency survive the export.
 */
export {
  type AdapterOptions,
  haltable,
  invokeTool,
  isControlFlowError,
  resultText,
} from "./control-flow.js";
export {
  type LangChainToolConfig,
  type LangChainToolFactory,
  type LangChainToolsOptions,
  toLangChainTools,
} from "./langchain.js";
export {
  type MastraLegacyExecuteOptions,
  type MastraToolContext,
  type MastraToolDefinition,
  type MastraToolsOptions,
  toMastraTools,
} from "./mastra.js";
export {
  type McpCallToolResult,
  type McpLowLevelServer,
  type McpRequestExtra,
  type McpToolDefinition,
  registerMcpTools,
  toMcpTools,
} from "./mcp-server.js";
export {
  type OpenAIAgentsCallDetails,
  type OpenAIAgentsToolConfig,
  type OpenAIAgentsToolFactory,
  type OpenAIAgentsToolsOptions,
  toOpenAIAgentsTools,
} from "./openai-agents.js";
export {
  type AiJsonSchemaHelper,
  type AiValidationResult,
  toVercelTools,
  type VercelTool,
  type VercelToolCallOptions,
  type VercelToolsOptions,
} from "./vercel.js";
