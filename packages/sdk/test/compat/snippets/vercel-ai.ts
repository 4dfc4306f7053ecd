/** docs/frameworks.md: the Vercel AI SDK through rebunoFetch (run by ../provider-fetch.test.ts). */
// #region vercel-ai
import { createOpenAI } from "@ai-sdk/openai";
import { rebunoFetch } from "@rebuno/sdk";
import { generateText } from "ai";

// Every AI SDK provider factory (createOpenAI, createAnthropic, createGoogleGenerativeAI…) takes `fetch`.
const openai = createOpenAI({ fetch: rebunoFetch });

export async function ask(question: string): Promise<string> {
  const { text } = await generateText({ model: openai.chat("gpt-4o-mini"), prompt: question });
  return text;
}
// #endregion
