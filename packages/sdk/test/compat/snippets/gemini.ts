/** docs/frameworks.md: Google's Gen AI SDK through rebunoFetch (run by ../provider-fetch.test.ts). */
// #region gemini
import { GoogleGenAI } from "@google/genai";
import { createRebunoFetch } from "@rebuno/sdk";

// Gemini puts the model in the URL, not the body: name the step target from the URL so policy
// rules can match on it.
const geminiFetch = createRebunoFetch({
  target: (url) => /\/models\/([^/:]+)/.exec(url)?.[1] ?? "",
});
const ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY ?? "", httpOptions: { fetch: geminiFetch } });

export async function ask(question: string): Promise<string> {
  const response = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: question });
  return response.text ?? "";
}
// #endregion
