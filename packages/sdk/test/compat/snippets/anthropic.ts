/** docs/frameworks.md: the Anthropic SDK through rebunoFetch (run by ../provider-fetch.test.ts). */
// #region anthropic
import Anthropic from "@anthropic-ai/sdk";
import { rebunoFetch } from "@rebuno/sdk";

// Reads ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL) from the environment.
const anthropic = new Anthropic({ fetch: rebunoFetch });

export async function ask(question: string): Promise<string> {
  const message = await anthropic.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 512,
    messages: [{ role: "user", content: question }],
  });
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}
// #endregion
