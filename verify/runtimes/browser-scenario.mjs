// The browser smoke scenario of @rebuno/client, run inside a page that serves the client bundle as
// /client.js (verify/tests/browser/client-bundle.test.ts, verify/runtimes/run.mjs). Plain JS: the page loads it as is.
import { CLIENT_VERSION, Client } from "/client.js";

/** Everything the page saw, for the caller to assert on. */
export async function run(baseUrl, token, agentId) {
  // #region browser
  const client = new Client({ baseUrl, apiKey: token });
  const created = await client.create(agentId, { hello: "browser" });
  // #endregion
  const read = await client.get(created.id);
  const agents = await client.listAgents();
  // SSE through the fetch engine's streaming path, ended by the cancel below.
  const seen = [];
  const follow = (async () => {
    for await (const event of client.followEvents(created.id)) seen.push(event.type);
  })();
  await client.cancel(created.id);
  const final = await client.waitForTerminal(created.id, { timeoutMs: 20_000 });
  await follow;
  const list = await client.list({ agentId });
  let notFound;
  try {
    await client.get("01920000-0000-7000-8000-00000000dead");
  } catch (err) {
    notFound = { name: err.name, status: err.status };
  }
  let unauthorized;
  try {
    await new Client({ baseUrl, apiKey: "wrong" }).listAgents();
  } catch (err) {
    unauthorized = err.name;
  }
  await client.close();
  return {
    version: CLIENT_VERSION,
    createdStatus: created.status,
    readId: read.id === created.id,
    agentIds: agents.map((a) => a.id),
    seen,
    finalStatus: final.status,
    listed: list.executions.some((e) => e.id === created.id),
    notFound,
    unauthorized,
    hasProcess: typeof globalThis.process !== "undefined",
  };
}
