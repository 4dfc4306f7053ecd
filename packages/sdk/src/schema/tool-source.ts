/**
 * What the exporters accept as "the tools": any iterable of RebunoTools (an array, a toolbox
 * instance, a Set) or an object exposing them as `.tools`. Keeping this structural means the
 * exporters never import the Toolbox class and work for `defineTool`/`wrapTool`/MCP tools alike.
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { RebunoTool } from "../tool-types.js";

/** Tools to export: an iterable of tools, or an object (a toolbox) holding them in `.tools`. */
export type ToolSource = Iterable<RebunoTool> | { readonly tools: Iterable<RebunoTool> };

/**
 * Flatten a {@link ToolSource} into an array, checking that each entry looks like a RebunoTool.
 * Duplicate tool names are refused: the kernel id must identify one tool.
 */
export function collectTools(source: ToolSource): RebunoTool[] {
  const iterable = isIterable(source) ? source : source.tools;
  if (!isIterable(iterable)) {
    throw new ConfigurationError("expected an iterable of Rebuno tools or an object with a `tools` iterable");
  }
  const out: RebunoTool[] = [];
  const seen = new Set<string>();
  for (const tool of iterable) {
    if (
      (typeof tool !== "object" && typeof tool !== "function") ||
      tool === null ||
      typeof tool.name !== "string" ||
      typeof tool.execute !== "function"
    ) {
      throw new ConfigurationError(
        `expected a Rebuno tool (with name and execute), got ${describeValue(tool)} at index ${out.length}`,
      );
    }
    if (seen.has(tool.name)) throw new ConfigurationError(`duplicate tool name '${tool.name}'`);
    seen.add(tool.name);
    out.push(tool);
  }
  return out;
}

function isIterable(value: unknown): value is Iterable<RebunoTool> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function"
  );
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object without name/execute";
  return typeof value;
}
