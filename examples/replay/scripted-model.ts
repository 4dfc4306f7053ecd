/**
 * The model used when the recording was made: an OpenAI-compatible chat-completions endpoint
 * answered in process. First it asks for `place_order` with the quantity from the prompt, then,
 * once the tool result is in the conversation, it answers with text. Offline replay never calls
 * it: the recording holds its answers.
 */

function completion(message: Record<string, unknown>, finishReason: string): Response {
  const body = {
    id: "chatcmpl-scripted",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o-mini",
    choices: [
      { index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason, logprobs: null },
    ],
    usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
  };
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
}

/** A `fetch` that answers like the OpenAI chat-completions API, scripted. */
export const scriptedModel: typeof fetch = async (_input, init) => {
  const request = JSON.parse(String(init?.body)) as { messages: { role: string; content: unknown }[] };
  const toolResult = request.messages.find((m) => m.role === "tool");
  if (toolResult !== undefined) {
    return completion({ content: `Done: ${String(toolResult.content)}` }, "stop");
  }
  const prompt = JSON.stringify(request.messages.at(-1)?.content ?? "");
  const [, quantity, sku] = /wants (\d+) × (\w+)/.exec(prompt) ?? [];
  return completion(
    {
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "place_order", arguments: JSON.stringify({ sku, quantity: Number(quantity) }) },
        },
      ],
    },
    "tool_calls",
  );
};
