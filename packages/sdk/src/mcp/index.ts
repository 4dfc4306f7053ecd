/** MCP client tools as recorded Rebuno tools. */
export { contentText, flattenMcpResult, type McpCallResult, throwIfMcpError } from "./result.js";
export {
  type McpClientLike,
  type McpRebunoTool,
  type McpToolDescriptor,
  type PerTool,
  type WrapMcpToolsOptions,
  wrapMcpTool,
  wrapMcpTools,
} from "./wrap-mcp-tools.js";
