#!/usr/bin/env node
// Agents written with OUR TypeScript SDK (packages/sdk, compiled by `pnpm tsc -b`), the mirror of
// verify/interop/python/agents.py for the mixed-language scenarios and the benchmark.
//
//   REBUNO_URL=… REBUNO_AGENT_SECRET=… node verify/interop/ts/agents.mjs <kind> --agent-id <id> --port <port>
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const sdk = await import(pathToFileURL(path.join(ROOT, "packages/sdk/dist/index.js")).href);
const { Agent, Result, defineTool, execution, previous, subagent, ToolError } = sdk;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { "agent-id": { type: "string" }, port: { type: "string" } },
});
const kind = positionals[0];
const agentId = values["agent-id"];
const port = Number(values.port);

const calls = new Map(); // execution id → { tool: count } of bodies that really ran
function ran(name) {
  const id = execution().id;
  const per = calls.get(id) ?? {};
  per[name] = (per[name] ?? 0) + 1;
  calls.set(id, per);
}
const callsOf = () => ({ ...(calls.get(execution().id) ?? {}) });
const leaseFacts = () => ({ dispatch_id: execution().dispatchId, attempt: execution().dispatchAttempt });

// --- parent: a tool whose body calls subagent() on another agent (Python or TS)
const delegate = defineTool({
  name: "delegate",
  async execute({ topic, shared_session: shared }) {
    ran("delegate");
    const child = process.env.CHILD_AGENT_ID;
    const session = shared ? `${child}:${execution().id}` : undefined;
    return subagent(child, { topic }, session ? { session } : {});
  },
});
const delegateFail = defineTool({
  name: "delegate_fail",
  async execute({ topic }) {
    ran("delegate_fail");
    return subagent(process.env.CHILD_AGENT_ID, { topic, fail: true });
  },
});

async function parentHandler(input) {
  const results = [];
  for (const topic of input.topics)
    results.push(await delegate({ topic, shared_session: Boolean(input.shared_session) }));
  const out = { results };
  if (input.with_failure !== false) {
    try {
      out.failure = await delegateFail({ topic: "doomed" });
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      out.failure_error = { str: err.message, tool_id: err.toolId };
    }
  }
  out.calls = callsOf();
  out.lease = leaseFacts();
  return out;
}

// --- child: reads previous(), optionally fails, returns Result(output, state)
const summarize = defineTool({
  name: "summarize",
  async execute({ topic }) {
    ran("summarize");
    return `summary of ${topic}`;
  },
});

async function childHandler(input) {
  const prev = await previous();
  if (input.fail) throw new Error(`child failed on purpose (${input.topic})`);
  const summary = await summarize({ topic: input.topic });
  const n = prev && typeof prev === "object" && "n" in prev ? prev.n + 1 : 1;
  return new Result({ output: { topic: input.topic, summary, n, prev }, state: { n, last: input.topic } });
}

// --- bench: 1,000 no-op tool calls in one execution
const noop = defineTool({
  name: "noop",
  async execute({ i }) {
    return i;
  },
});

async function benchHandler(input) {
  const started = performance.now();
  for (let i = 0; i < input.calls; i++) await noop({ i });
  return { calls: input.calls, seconds: (performance.now() - started) / 1000 };
}

const HANDLERS = { parent: parentHandler, child: childHandler, bench: benchHandler };
const handler = HANDLERS[kind];
if (!handler || !agentId || !Number.isInteger(port)) {
  console.error(`usage: agents.mjs <${Object.keys(HANDLERS).join("|")}> --agent-id ID --port PORT`);
  process.exit(2);
}
const agent = new Agent(agentId, handler);
const server = await agent.serve({ host: "127.0.0.1", port });
console.error(`ts agent ${agentId} (${kind}) listening on ${server.url}`);
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.once(sig, () => {
    server.close().finally(() => process.exit(0));
  });
}
