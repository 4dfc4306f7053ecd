import { describe, expect, it } from "vitest";
import { extractUsage } from "../src/index.js";

const record = (body: string, contentType = "application/json") =>
  JSON.stringify({ status: 200, headers: { "content-type": contentType }, body });

describe("extractUsage", () => {
  it("Anthropic Messages JSON", () => {
    const body = JSON.stringify({
      id: "msg_1",
      type: "message",
      content: [{ type: "text", text: "hi" }],
      usage: { input_tokens: 12, output_tokens: 34, cache_read_input_tokens: 0 },
    });
    expect(extractUsage(record(body))).toEqual({ inputTokens: 12, outputTokens: 34 });
  });

  it("OpenAI Chat Completions JSON", () => {
    const body = JSON.stringify({
      id: "chatcmpl-1",
      choices: [{ message: { role: "assistant", content: "hi" } }],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect(extractUsage(record(body))).toEqual({ inputTokens: 7, outputTokens: 3 });
  });

  it("OpenAI Responses JSON (input_tokens/output_tokens)", () => {
    const body = JSON.stringify({ object: "response", usage: { input_tokens: 5, output_tokens: 6 } });
    expect(extractUsage(record(body))).toEqual({ inputTokens: 5, outputTokens: 6 });
  });

  it("OpenAI chat SSE: the final chunk carries usage, earlier chunks have usage: null", () => {
    const sse = [
      'data: {"id":"c","choices":[{"delta":{"content":"Hel"}}],"usage":null}',
      "",
      'data: {"id":"c","choices":[{"delta":{"content":"lo"}}],"usage":null}',
      "",
      'data: {"id":"c","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}',
      "",
      "data: [DONE]",
      "",
      "",
    ].join("\n");
    expect(extractUsage(record(sse, "text/event-stream"))).toEqual({ inputTokens: 11, outputTokens: 2 });
  });

  it("Anthropic SSE: input from message_start, final output from the last message_delta", () => {
    const sse = [
      "event: message_start",
      'data: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":25,"output_tokens":1}}}',
      "",
      "event: content_block_delta",
      'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}',
      "",
      "event: message_delta",
      'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}',
      "",
      "event: message_stop",
      'data: {"type":"message_stop"}',
      "",
    ].join("\r\n");
    expect(extractUsage(record(sse, "text/event-stream"))).toEqual({ inputTokens: 25, outputTokens: 15 });
  });

  it("OpenAI Responses SSE: response.completed carries response.usage", () => {
    const sse = [
      "event: response.output_text.delta",
      'data: {"type":"response.output_text.delta","delta":"x"}',
      "",
      "event: response.completed",
      'data: {"type":"response.completed","response":{"usage":{"input_tokens":9,"output_tokens":4}}}',
      "",
    ].join("\n");
    expect(extractUsage(record(sse, "text/event-stream"))).toEqual({ inputTokens: 9, outputTokens: 4 });
  });

  it("no usage, error responses and garbage → undefined", () => {
    expect(extractUsage(record(JSON.stringify({ choices: [] })))).toBeUndefined();
    expect(
      extractUsage(JSON.stringify({ status: 429, headers: {}, body: '{"error":{"type":"rate_limit"}}' })),
    ).toBeUndefined();
    expect(extractUsage(record("data: {}\n\n", "text/event-stream"))).toBeUndefined();
    expect(extractUsage("not json")).toBeUndefined();
    expect(extractUsage("null")).toBeUndefined();
    expect(
      extractUsage(record(JSON.stringify({ usage: { input_tokens: -1, output_tokens: "3" } }))),
    ).toBeUndefined();
  });

  it("a side that is missing reads as 0", () => {
    expect(extractUsage(record(JSON.stringify({ usage: { output_tokens: 8 } })))).toEqual({
      inputTokens: 0,
      outputTokens: 8,
    });
  });

  it("legacy records (the response JSON itself, not wrapped) are read directly", () => {
    expect(extractUsage(JSON.stringify({ usage: { input_tokens: 1, output_tokens: 2 } }))).toEqual({
      inputTokens: 1,
      outputTokens: 2,
    });
  });
});
