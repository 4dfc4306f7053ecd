/**
 * Serve Rebuno tools from an MCP server (`@modelcontextprotocol/sdk`), e.g. the in-process server
 * the Claude Agent SDK talks to, or any MCP client.
 *
 * `McpServer.registerTool` only takes zod schemas, so a tool's JSON Schema cannot go through it
 * without a lossy round trip. Instead {@link registerMcpTools} installs the `tools/list` and
 * `tools/call` handlers on the low-level `Server` and advertises each tool's JSON Schema as is.
 * That server then belongs to these tools: registering zod tools on the same `McpServer` fails
 * with the MCP SDK's "handler already exists" error.
 *
 * Results: a policy denial is the tool's normal string result; a failing tool (ToolError,
 * invalid arguments) is an `isError: true` result the model can read; Rebuno control flow
 * (Blocked, Terminated, LeaseSuperseded, …) is *not* turned into a result: the request fails and
 * `halt` is aborted, so the agent loop on the other side stops instead of continuing.
 */
import { ConfigurationError } from "@rebuno/protocol";
import { withoutDialect } from "../schema/schema-walk.js";
import { assignToolNames } from "../schema/tool-names.js";
import { collectTools, type ToolSource } from "../schema/tool-source.js";
import { validateWith } from "../schema/validate.js";
import type { JsonSchema, RebunoTool } from "../tool-types.js";
import { type AdapterOptions, invokeTool, isControlFlowError } from "./control-flow.js";
import { loadOptionalPeer } from "./load-peer.js";

/** An MCP `CallToolResult`. */
export interface McpCallToolResult {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** The handler `extra` fields the adapter reads. */
export interface McpRequestExtra {
  readonly signal?: AbortSignal | undefined;
  readonly requestId?: string | number | undefined;
}

/** One tool as MCP describes it, plus the handler that runs it. */
export interface McpToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly annotations: { readonly idempotentHint: boolean };
  /** Validate, run the tool, and build the CallToolResult (control flow rethrows). */
  readonly handler: (args: unknown, extra?: McpRequestExtra) => Promise<McpCallToolResult>;
}

/**
 * Describe tools for MCP: name (sanitised), description, JSON Schema, annotations, and a handler
 * that turns the tool outcome into a `CallToolResult`. Framework-neutral; see
 * {@link registerMcpTools} to serve them.
 */
export function toMcpTools(tools: ToolSource, options: AdapterOptions = {}): McpToolDefinition[] {
  const list = collectTools(tools);
  const names = assignToolNames(list.map((t) => t.name));
  return list.map((tool) => {
    const inputSchema = withoutDialect(tool.inputSchema);
    return {
      name: names.get(tool.name)!,
      description: tool.description,
      inputSchema,
      // A hint only (MCP never enforces it); the kernel enforces the real delivery class.
      annotations: { idempotentHint: tool.idempotency === "safe_to_retry" },
      handler: (args, extra) => callForMcp(tool, args ?? {}, extra, options),
    };
  });
}

async function callForMcp(
  tool: RebunoTool,
  args: unknown,
  extra: McpRequestExtra | undefined,
  options: AdapterOptions,
): Promise<McpCallToolResult> {
  const checked = await validateWith(tool.input ?? tool.inputSchema, args);
  if (checked.issues !== undefined) {
    const detail = checked.issues.map(
      (i) => `${(i.path ?? []).map(String).join(".") || "(root)"}: ${i.message}`,
    );
    return errorResult(`Invalid arguments for tool ${tool.name}: ${detail.join("; ")}`);
  }
  try {
    const toolCallId = extra?.requestId === undefined ? undefined : String(extra.requestId);
    return successResult(await invokeTool(tool, args, { toolCallId, abortSignal: extra?.signal }, options));
  } catch (error) {
    if (isControlFlowError(error)) throw error;
    return errorResult(error instanceof Error ? error.message : String(error));
  }
}

function successResult(value: unknown): McpCallToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  const text = value === undefined ? "" : JSON.stringify(value);
  const result: McpCallToolResult = { content: [{ type: "text", text }] };
  // Objects also go out as structuredContent so clients can skip re-parsing the text.
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    result.structuredContent = value as Record<string, unknown>;
  }
  return result;
}

function errorResult(message: string): McpCallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * The low-level MCP `Server` methods used (an `McpServer` exposes one as `.server`). Parameters
 * are typed `never` so the SDK's generic, zod-typed signatures are accepted as they are without
 * this package depending on the MCP SDK's types.
 */
export interface McpLowLevelServer {
  registerCapabilities(capabilities: never): void;
  setRequestHandler(schema: never, handler: never): void;
  assertCanSetRequestHandler?(method: string): void;
}

interface McpTypesModule {
  ListToolsRequestSchema: unknown;
  CallToolRequestSchema: unknown;
  McpError: new (code: number, message: string) => Error;
  ErrorCode: { InvalidParams: number };
}

/**
 * Serve `tools` from an MCP server (`McpServer` or the low-level `Server`). Call before
 * `server.connect(transport)`.
 *
 * @example
 * ```ts
 * import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
 * import { registerMcpTools, Toolbox, tool } from "@rebuno/sdk";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const server = new McpServer({ name: "billing", version: "1.0.0" });
 * await registerMcpTools(server, new Billing());
 * // A real server connects a StdioServerTransport or a Streamable HTTP transport here.
 * const [, transport] = InMemoryTransport.createLinkedPair();
 * await server.connect(transport);
 * await server.close();
 * ```
 */
export async function registerMcpTools(
  server: McpLowLevelServer | { readonly server: McpLowLevelServer },
  tools: ToolSource,
  options: AdapterOptions = {},
): Promise<McpToolDefinition[]> {
  const target = "server" in server ? server.server : server;
  const definitions = toMcpTools(tools, options);
  const types = await loadOptionalPeer<McpTypesModule>(
    ["@modelcontextprotocol/sdk/types.js"],
    (s) => import(s),
    "registerMcpTools",
  );
  try {
    target.assertCanSetRequestHandler?.("tools/list");
    target.assertCanSetRequestHandler?.("tools/call");
    target.registerCapabilities({ tools: { listChanged: false } } as never);
  } catch (error) {
    throw new ConfigurationError(
      `registerMcpTools: ${error instanceof Error ? error.message : String(error)} ` +
        "(register Rebuno tools on a server of their own, before connect())",
      { cause: error },
    );
  }
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const list = definitions.map(({ name, description, inputSchema, annotations }) => ({
    name,
    description,
    inputSchema,
    annotations,
  }));
  target.setRequestHandler(types.ListToolsRequestSchema as never, (() => ({ tools: list })) as never);
  const callTool = (request: { params: { name: string; arguments?: unknown } }, extra: McpRequestExtra) => {
    const definition = byName.get(request.params.name);
    if (definition === undefined) {
      throw new types.McpError(types.ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    }
    return definition.handler(request.params.arguments ?? {}, extra);
  };
  target.setRequestHandler(types.CallToolRequestSchema as never, callTool as never);
  return definitions;
}
