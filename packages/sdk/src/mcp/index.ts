/** MCP client tools as recorded Rebuno tools. */
export { contentText, flattenMcpResult, type McpCallResult, throwIfMcpError } from "./result.js";
export {
  type McpCall,
  type McpClientLike,
  type McpRebunoTool,
  type McpToolDescriptor,
  type PerTool,
  type WrapMcpDescriptorsOptions,
  type WrapMcpToolsOptions,
  wrapMcpTool,
  wrapMcpTools,
} from "./wrap-mcp-tools.js";
