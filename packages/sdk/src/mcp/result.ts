/**
 * Turning an MCP `CallToolResult` into the value a Rebuno step records, and into a ToolError
 * when the server reported a tool failure. The official SDKs (Python and the old TypeScript one)
 * ignored `isError`, so MCP tool failures were recorded as *successful* steps.
 */
import { ToolError } from "@rebuno/protocol";

/** The fields of an MCP `CallToolResult` read here (older servers may send `toolResult`). */
export interface McpCallResult {
  readonly content?: ReadonlyArray<{
    readonly type: string;
    readonly text?: string;
    readonly [key: string]: unknown;
  }>;
  readonly structuredContent?: unknown;
  readonly structured_content?: unknown;
  readonly toolResult?: unknown;
  readonly isError?: boolean;
  readonly [key: string]: unknown;
}

/**
 * The value to record for a tool result: `structuredContent` when present; otherwise the
 * content blocks as text (text blocks verbatim, other blocks as JSON), a single block as a
 * plain string and several joined with newlines; an empty content list gives `""`. Values that
 * are not MCP results pass through unchanged.
 */
export function flattenMcpResult(result: unknown): unknown {
  if (typeof result !== "object" || result === null) return result;
  const r = result as McpCallResult;
  const structured = r.structuredContent ?? r.structured_content;
  if (structured !== undefined) return structured;
  if (Array.isArray(r.content)) return contentText(r);
  if ("toolResult" in r) return r.toolResult; // protocol 2024-10-07 compatibility shape
  return result;
}

/** The text of a result's content blocks (the error message for `isError` results). */
export function contentText(result: McpCallResult): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  return blocks
    .map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : JSON.stringify(b)))
    .join("\n");
}

/** Throw a ToolError for an `isError: true` result; return the result otherwise. */
export function throwIfMcpError<T>(result: T, toolId: string): T {
  if (typeof result === "object" && result !== null && (result as McpCallResult).isError === true) {
    const message = contentText(result as McpCallResult) || "MCP tool reported an error";
    throw new ToolError(message, { toolId, details: { mcpResult: result } });
  }
  return result;
}
