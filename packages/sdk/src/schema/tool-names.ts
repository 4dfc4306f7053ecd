/**
 * Provider-visible tool names. OpenAI and Anthropic accept `^[a-zA-Z0-9_-]{1,64}$`; Gemini also
 * wants the first character to be a letter or underscore. Rebuno tool names normally already
 * match (the kernel id *is* the LLM name), but MCP-wrapped or `wrapTool` names may carry dots,
 * slashes or spaces, so exporters sanitise deterministically and refuse collisions instead of
 * silently letting one tool shadow another.
 */
import { ConfigurationError } from "@rebuno/protocol";

/** The name rule shared by OpenAI, Anthropic, Vercel AI SDK and MCP clients that forward to them. */
export const TOOL_NAME_PATTERN: RegExp = /^[a-zA-Z0-9_-]{1,64}$/;

/** Options for {@link sanitizeToolName}. */
export interface SanitizeToolNameOptions {
  /** Gemini: the name must start with a letter or underscore. */
  readonly leadingLetter?: boolean;
}

/**
 * Map `name` onto `^[a-zA-Z0-9_-]{1,64}$`: runs of other characters become `_`; names longer than
 * 64 characters keep a prefix plus a short hash of the full name so distinct long names stay
 * distinct. Valid names are returned unchanged.
 */
export function sanitizeToolName(name: string, options: SanitizeToolNameOptions = {}): string {
  let out = name.replace(/[^a-zA-Z0-9_-]+/g, "_");
  if (out === "" || out === "_") out = "tool";
  if (options.leadingLetter && !/^[a-zA-Z_]/.test(out)) out = `_${out}`;
  if (out.length > 64) out = `${out.slice(0, 55)}_${fnv1a(name)}`;
  return out;
}

/**
 * Sanitise every name and fail on collisions. Returns a map from the Rebuno tool name to the
 * provider-visible name, in input order.
 */
export function assignToolNames(
  names: Iterable<string>,
  options: SanitizeToolNameOptions = {},
): Map<string, string> {
  const byExported = new Map<string, string>();
  const out = new Map<string, string>();
  for (const name of names) {
    const exported = sanitizeToolName(name, options);
    const clash = byExported.get(exported);
    if (clash !== undefined && clash !== name) {
      throw new ConfigurationError(
        `tool names '${clash}' and '${name}' both become '${exported}' after sanitising to ` +
          `${TOOL_NAME_PATTERN}; rename one of them`,
      );
    }
    byExported.set(exported, name);
    out.set(name, exported);
  }
  return out;
}

/** 32-bit FNV-1a as 8 hex digits: tiny, dependency-free and stable across runs. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}
