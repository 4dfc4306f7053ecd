/** docs/frameworks.md: LangChain's ChatOpenAI through rebunoFetch (run by ../provider-fetch.test.ts). */
// #region langchain-openai
import { ChatOpenAI } from "@langchain/openai";
import { rebunoFetch } from "@rebuno/sdk";

// `configuration` is handed to the OpenAI client LangChain builds.
const model = new ChatOpenAI({ model: "gpt-4o-mini", configuration: { fetch: rebunoFetch } });

export async function ask(question: string): Promise<string> {
  const reply = await model.invoke(question);
  return String(reply.content);
}
// #endregion
