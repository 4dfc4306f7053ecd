/**
 * Wrap the tools of an MCP server, reached through an `@modelcontextprotocol/sdk` `Client`, as
 * Rebuno tools: every call is a recorded `tool_call` step (policy, approvals, idempotency,
 * replay), built on {@link wrapTool}.
 *
 * Differences from the official SDKs:
 * - the client is used correctly: `listTools()` returns `{ tools, nextCursor }` (all pages are
 *   read) and `callTool({ name, arguments })` is called as a method, so `this` is kept;
 * - `isError: true` results fail the step with a ToolError (or, with `onError: "return"`, are
 *   recorded as the error text, for agents that want the model to see it);
 * - `resources`, `transformArgs`, `include` and a per-tool `idempotency` are exposed;
 * - exported names are sanitised (`prefix_name` with dots, slashes or spaces would break
 *   provider name rules), while the server is always called with the bare name.
 */
import { ConfigurationError } from "@rebuno/protocol";
import { execution } from "../runtime/context.js";
import { isSchemaObject } from "../schema/schema-walk.js";
import { assignToolNames } from "../schema/tool-names.js";
import type { Idempotency, JsonSchema } from "../tool-types.js";
import { type CallableTool, wrapTool } from "../tools/define-tool.js";
import { flattenMcpResult, throwIfMcpError } from "./result.js";

/** A tool as `listTools()` describes it (the fields read here). */
export interface McpToolDescriptor {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema?: JsonSchema | undefined;
  readonly annotations?:
    | {
        readonly title?: string | undefined;
        readonly readOnlyHint?: boolean | undefined;
        readonly destructiveHint?: boolean | undefined;
        readonly idempotentHint?: boolean | undefined;
        readonly openWorldHint?: boolean | undefined;
      }
    | undefined;
}

/** The `@modelcontextprotocol/sdk` `Client` methods used. */
export interface McpClientLike {
  listTools(params?: {
    cursor?: string;
  }): Promise<{ tools: McpToolDescriptor[]; nextCursor?: string | undefined }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: { signal?: AbortSignal },
  ): Promise<unknown>;
}

/** A wrapped MCP tool: callable, with a JSON object as its argument. */
export type McpRebunoTool = CallableTool<Record<string, unknown>, unknown>;

/** A value, or a function of the tool descriptor giving the value. */
export type PerTool<T> = T | ((tool: McpToolDescriptor) => T);

/** Options for {@link wrapMcpTools} and {@link wrapMcpTool}. */
export interface WrapMcpToolsOptions {
  /** Exported name is `${prefix}_${name}` (sanitised); the server is called with `name`. */
  readonly prefix?: string;
  /** Only these tools (by server-side name), or those the predicate accepts. */
  readonly include?: readonly string[] | ((tool: McpToolDescriptor) => boolean);
  /** Default `"safe_to_retry"`; use `"at_most_once"` for tools with side effects. */
  readonly idempotency?: PerTool<Idempotency>;
  /** Resource keys the tool may change (registered with `resource()`; see docs/sdk/agents.md). */
  readonly resources?: PerTool<readonly string[]>;
  /**
   * Drop `null`/`undefined` arguments before recording and calling (default `true`): models fill
   * optional fields with null and typed MCP parameters reject it.
   */
  readonly stripNulls?: boolean;
  /** Runs after null stripping; its output is recorded and sent to the server. */
  readonly transformArgs?: (
    args: Record<string, unknown>,
    tool: McpToolDescriptor,
  ) => Record<string, unknown>;
  /** `isError: true` results: `"throw"` (default) fails the step with ToolError; `"return"` records the text. */
  readonly onError?: "throw" | "return";
  /** Maps the CallToolResult to the recorded value (default {@link flattenMcpResult}). */
  readonly toResult?: (result: unknown, tool: McpToolDescriptor) => unknown;
}

/** Calls an MCP tool by its server-side name (the official SDK's `call` option). */
export type McpCall = (name: string, args: Record<string, unknown>) => unknown;

/** Options of the descriptor-list form: the official SDK's `{ call, prefix, … }`. */
export interface WrapMcpDescriptorsOptions extends WrapMcpToolsOptions {
  /** Called with the bare server-side name and the (null-stripped) arguments. */
  readonly call: McpCall;
}

const MCP_FORMS =
  "pass an MCP client (wrapMcpTools(client, options)) or a descriptor list with a call option (wrapMcpTools(listed.tools, { call })); see docs/migration.md";

/**
 * List every tool of `client` (all pages) and wrap the included ones.
 *
 * The official SDK's form, a plain descriptor list plus `call`, is accepted too and returns the
 * tools at once (nothing to list):
 * `wrapMcpTools(listed.tools, { call: (name, args) => client.callTool({ name, arguments: args }), prefix })`.
 *
 * @example
 * ```ts
 * // example: compile only: it starts an MCP server process (GitHub's) to connect to
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
 * import { wrapMcpTools } from "@rebuno/sdk";
 *
 * const client = new Client({ name: "agent", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: "github-mcp-server", args: ["stdio"] }));
 * const tools = await wrapMcpTools(client, { prefix: "github", idempotency: "at_most_once" });
 * ```
 */
export function wrapMcpTools(client: McpClientLike, options?: WrapMcpToolsOptions): Promise<McpRebunoTool[]>;
export function wrapMcpTools(
  descriptors: Iterable<McpToolDescriptor>,
  options: WrapMcpDescriptorsOptions,
): McpRebunoTool[];
export function wrapMcpTools(
  source: McpClientLike | Iterable<McpToolDescriptor>,
  options: WrapMcpToolsOptions | WrapMcpDescriptorsOptions = {},
): Promise<McpRebunoTool[]> | McpRebunoTool[] {
  if (isMcpClient(source)) return wrapListedTools(source, options);
  if (!isIterable(source)) throw new ConfigurationError(`wrapMcpTools: ${MCP_FORMS}`);
  const client = callClient(options);
  return wrapDescriptors(client, [...source], options);
}

function isMcpClient(value: unknown): value is McpClientLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as McpClientLike).listTools === "function" &&
    typeof (value as McpClientLike).callTool === "function"
  );
}

function isIterable(value: unknown): value is Iterable<McpToolDescriptor> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Iterable<unknown>)[Symbol.iterator] === "function"
  );
}

/** The `call` option as the one client method the wrappers use. */
function callClient(options: WrapMcpToolsOptions | WrapMcpDescriptorsOptions): McpClientLike {
  const call = (options as Partial<WrapMcpDescriptorsOptions>).call;
  if (typeof call !== "function") {
    throw new ConfigurationError(`wrapMcpTools: a descriptor list needs a call option; ${MCP_FORMS}`);
  }
  return {
    listTools: async () => ({ tools: [] }),
    callTool: async (params) => call(params.name, params.arguments ?? {}),
  };
}

async function wrapListedTools(
  client: McpClientLike,
  options: WrapMcpToolsOptions,
): Promise<McpRebunoTool[]> {
  const descriptors: McpToolDescriptor[] = [];
  let cursor: string | undefined;
  const seenCursors = new Set<string>();
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    descriptors.push(...page.tools);
    cursor = page.nextCursor;
    // A server repeating a cursor would loop forever; stop at the first repeat.
    if (cursor !== undefined && seenCursors.has(cursor)) break;
    if (cursor !== undefined) seenCursors.add(cursor);
  } while (cursor !== undefined);
  return wrapDescriptors(client, descriptors, options);
}

function wrapDescriptors(
  client: McpClientLike,
  descriptors: readonly McpToolDescriptor[],
  options: WrapMcpToolsOptions,
): McpRebunoTool[] {
  for (const d of descriptors) {
    if (typeof d !== "object" || d === null || typeof d.name !== "string") {
      throw new ConfigurationError(`wrapMcpTools: every descriptor needs a string name; ${MCP_FORMS}`);
    }
  }
  const included = descriptors.filter((d) => isIncluded(d, options.include));
  if (Array.isArray(options.include)) {
    const missing = options.include.filter((n) => !descriptors.some((d) => d.name === n));
    if (missing.length > 0) {
      throw new ConfigurationError(
        `wrapMcpTools: the server has no tool named ${missing.map((n) => `'${n}'`).join(", ")}`,
      );
    }
  }
  const names = assignToolNames(included.map((d) => exportedName(d.name, options.prefix)));
  return included.map((d) => buildTool(client, d, names.get(exportedName(d.name, options.prefix))!, options));
}

/**
 * Wrap one already-listed MCP tool: `wrapMcpTool(client, descriptor, options)`, or the official
 * SDK's `wrapMcpTool(descriptor, { call, prefix })`.
 */
export function wrapMcpTool(
  client: McpClientLike,
  descriptor: McpToolDescriptor,
  options?: WrapMcpToolsOptions,
): McpRebunoTool;
export function wrapMcpTool(descriptor: McpToolDescriptor, options: WrapMcpDescriptorsOptions): McpRebunoTool;
export function wrapMcpTool(
  first: McpClientLike | McpToolDescriptor,
  second?: McpToolDescriptor | WrapMcpDescriptorsOptions,
  third: WrapMcpToolsOptions = {},
): McpRebunoTool {
  const official = !isMcpClient(first);
  const client = official ? callClient((second ?? {}) as WrapMcpDescriptorsOptions) : first;
  const descriptor = (official ? first : second) as McpToolDescriptor;
  const options = (official ? second : third) as WrapMcpToolsOptions;
  if (typeof descriptor !== "object" || descriptor === null || typeof descriptor.name !== "string") {
    throw new ConfigurationError(`wrapMcpTool: the descriptor needs a string name; ${MCP_FORMS}`);
  }
  const name = assignToolNames([exportedName(descriptor.name, options.prefix)])
    .values()
    .next().value as string;
  return buildTool(client, descriptor, name, options);
}

function buildTool(
  client: McpClientLike,
  descriptor: McpToolDescriptor,
  name: string,
  options: WrapMcpToolsOptions,
): McpRebunoTool {
  const stripNulls = options.stripNulls ?? true;
  const toResult = options.toResult ?? flattenMcpResult;
  const prepare = (args: Record<string, unknown>): Record<string, unknown> => {
    const base = isSchemaObject(args) ? args : {};
    const stripped = stripNulls
      ? Object.fromEntries(Object.entries(base).filter(([, v]) => v != null))
      : { ...base };
    return options.transformArgs ? options.transformArgs(stripped, descriptor) : stripped;
  };
  const definition = {
    name,
    description: descriptor.description ?? "",
    inputSchema: inputSchemaOf(descriptor),
    idempotency: perTool(options.idempotency, descriptor) ?? "safe_to_retry",
    resources: perTool(options.resources, descriptor) ?? [],
    transformArgs: prepare,
    invoke: async (args: Record<string, unknown>) => {
      const result = await client.callTool(
        { name: descriptor.name, arguments: args },
        undefined,
        callOptions(),
      );
      return options.onError === "return" ? result : throwIfMcpError(result, name);
    },
    toResult: (result: unknown) => toResult(result, descriptor),
  };
  // The one place MCP tools enter the recording runtime.
  return wrapTool<Record<string, unknown>, unknown, unknown>(definition);
}

/** Cancel the MCP request when the execution's lease is lost (the only signal wrapTool sees). */
function callOptions(): { signal?: AbortSignal } {
  try {
    return { signal: execution().signal };
  } catch {
    return {};
  }
}

function inputSchemaOf(descriptor: McpToolDescriptor): JsonSchema {
  const schema = descriptor.inputSchema;
  // MCP requires an object root; a server omitting it means "no arguments".
  if (!isSchemaObject(schema)) return { type: "object", properties: {} };
  if (schema.type !== "object") {
    throw new ConfigurationError(
      `MCP tool '${descriptor.name}': inputSchema root must be type "object", got ${JSON.stringify(schema.type)}`,
    );
  }
  return schema;
}

function exportedName(name: string, prefix: string | undefined): string {
  return prefix ? `${prefix}_${name}` : name;
}

function isIncluded(d: McpToolDescriptor, include: WrapMcpToolsOptions["include"]): boolean {
  if (include === undefined) return true;
  return typeof include === "function" ? include(d) : include.includes(d.name);
}

function perTool<T>(value: PerTool<T> | undefined, d: McpToolDescriptor): T | undefined {
  return typeof value === "function" ? (value as (tool: McpToolDescriptor) => T)(d) : value;
}
