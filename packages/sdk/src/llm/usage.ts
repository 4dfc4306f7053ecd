/**
 * Token usage from a provider's response body, for the `gen_ai.usage.*` span attributes: a JSON
 * body, or the `data:` events of a stream (the last event that reports usage wins). OpenAI chat
 * (`prompt_tokens`/`completion_tokens`), OpenAI responses and Anthropic (`input_tokens`/
 * `output_tokens`, also under `response` or `message`), Gemini (`usageMetadata`).
 */

/** Input and output token counts; either may be unknown. */
export interface TokenUsage {
  readonly input: number | undefined;
  readonly output: number | undefined;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function fromObject(value: unknown): TokenUsage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const o = value as Record<string, unknown>;
  const nested = o.response ?? o.message;
  const usage = (o.usage ??
    o.usageMetadata ??
    (typeof nested === "object" && nested !== null
      ? ((nested as Record<string, unknown>).usage ?? undefined)
      : undefined)) as Record<string, unknown> | undefined;
  if (typeof usage !== "object" || usage === null) return undefined;
  const input = num(usage.input_tokens) ?? num(usage.prompt_tokens) ?? num(usage.promptTokenCount);
  const output = num(usage.output_tokens) ?? num(usage.completion_tokens) ?? num(usage.candidatesTokenCount);
  return input === undefined && output === undefined ? undefined : { input, output };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The usage a response body reports, or undefined. */
export function usageOf(body: string): TokenUsage | undefined {
  const whole = fromObject(parse(body));
  if (whole !== undefined) return whole;
  let found: TokenUsage | undefined;
  for (const line of body.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const usage = fromObject(parse(line.slice(5).trim()));
    if (usage !== undefined) {
      // Anthropic streams input tokens first (message_start) and output tokens last (message_delta).
      found = { input: usage.input ?? found?.input, output: usage.output ?? found?.output };
    }
  }
  return found;
}
