/** docs/frameworks.md: the OpenAI SDK through rebunoFetch (run by ../provider-fetch.test.ts). */
// #region openai
import { rebunoFetch } from "@rebuno/sdk";
import OpenAI from "openai";

// Reads OPENAI_API_KEY (and OPENAI_BASE_URL) from the environment.
const openai = new OpenAI({ fetch: rebunoFetch });

export async function ask(question: string): Promise<string> {
  const completion = await openai.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: question }],
  });
  return completion.choices[0]?.message.content ?? "";
}
// #endregion
