/**
 * Token usage of a recorded LLM call (docs/protocol.md §6.5), for `step.succeeded.usage` and token
 * budgets (docs/protocol.md §9.6).
 *
 * SDKs record `{"status": <int>, "headers": {...}, "body": "<response text>"}`; streamed
 * responses are recorded as the whole SSE text. Usage lives in the JSON body or in the stream's
 * events, either Anthropic-style (`input_tokens` / `output_tokens`) or OpenAI-style
 * (`prompt_tokens` / `completion_tokens`).
 */

/** Token counts of one LLM call. */
export interface LlmUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

interface PartialUsage {
  input?: number;
  output?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const count = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

/** Reads a `usage` object in either vendor's vocabulary. */
function readUsage(usage: unknown): PartialUsage | undefined {
  if (!isObject(usage)) return undefined;
  const input = count(usage.input_tokens) ?? count(usage.prompt_tokens);
  const output = count(usage.output_tokens) ?? count(usage.completion_tokens);
  if (input === undefined && output === undefined) return undefined;
  return { ...(input !== undefined ? { input } : {}), ...(output !== undefined ? { output } : {}) };
}

/**
 * Finds usage in one JSON payload: top-level `usage` (Anthropic/OpenAI responses, OpenAI chat
 * stream final chunk, Anthropic `message_delta`), `message.usage` (Anthropic `message_start`)
 * or `response.usage` (OpenAI Responses `response.completed`).
 */
function usageOf(payload: unknown): PartialUsage | undefined {
  if (!isObject(payload)) return undefined;
  return (
    readUsage(payload.usage) ??
    (isObject(payload.message) ? readUsage(payload.message.usage) : undefined) ??
    (isObject(payload.response) ? readUsage(payload.response.usage) : undefined)
  );
}

/** The `data:` payloads of an SSE stream, one string per event (multi-line data joined by \n). */
function sseData(text: string): string[] {
  const events: string[] = [];
  let data: string[] = [];
  const flush = (): void => {
    if (data.length > 0) events.push(data.join("\n"));
    data = [];
  };
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") flush();
    else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
  flush();
  return events;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function usageOfBody(body: unknown): PartialUsage | undefined {
  if (typeof body !== "string") return usageOf(body);
  const direct = usageOf(parseJson(body));
  if (direct !== undefined) return direct;
  // A stream: later events override the fields they carry. That keeps "the last event carrying
  // usage" semantics while still combining Anthropic's split report (input tokens in
  // `message_start`, final output tokens in the last `message_delta`).
  let merged: PartialUsage | undefined;
  for (const data of sseData(body)) {
    const u = usageOf(parseJson(data));
    if (u !== undefined) merged = { ...merged, ...u };
  }
  return merged;
}

/**
 * Extracts token usage from a recorded LLM step result.
 *
 * @param resultText - The step's recorded result JSON text.
 * @returns The counts (a side the provider did not report reads as 0), or `undefined` when no
 *   usage can be found — the caller then allows the step and counts a missing-usage metric.
 */
export function extractUsage(resultText: string): LlmUsage | undefined {
  const record = parseJson(resultText);
  if (!isObject(record)) return undefined;
  // Legacy records are not wrapped in {status, headers, body}; read them as the body itself.
  const usage = "body" in record ? usageOfBody(record.body) : usageOf(record);
  if (usage === undefined) return undefined;
  return { inputTokens: usage.input ?? 0, outputTokens: usage.output ?? 0 };
}
