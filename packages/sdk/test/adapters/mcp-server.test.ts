import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Blocked, ConfigurationError, ToolError } from "@rebuno/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod3";
import { registerMcpTools, toMcpTools } from "../../src/adapters/index.js";
import { makeTool } from "../schema/fixtures.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function connect(server: McpServer | Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return client;
}

const blocked = new Blocked("step blocked", { approvalId: "ap-1" });
const tools = [
  makeTool("add", z.object({ a: z.number(), b: z.number() }), ({ a, b }) => ({ sum: Number(a) + Number(b) })),
  makeTool("hello", z3.object({ who: z3.string() }), ({ who }) => `hi ${String(who)}`, {
    idempotency: "at_most_once",
  }),
  makeTool(
    "send",
    { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
    () => "send not allowed. reason: outside business hours",
  ),
  makeTool("fail", { type: "object", properties: {} }, () => {
    throw new ToolError("upstream 502", { toolId: "fail" });
  }),
  makeTool("wait", { type: "object", properties: {} }, () => {
    throw blocked;
  }),
];

describe("registerMcpTools over a real MCP client/server pair", () => {
  it("lists the tools with their JSON Schemas and annotations", async () => {
    const server = new McpServer({ name: "rebuno", version: "1.0.0" });
    await registerMcpTools(server, tools);
    const client = await connect(server);
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name)).toEqual(["add", "hello", "send", "fail", "wait"]);
    expect(listed[0]).toMatchObject({
      description: "add tool",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      annotations: { idempotentHint: true },
    });
    expect(listed[0]!.inputSchema).not.toHaveProperty("$schema");
    expect(listed[1]!.annotations).toEqual({ idempotentHint: false });
  });

  it("calls tools: results, structured content, denials, tool errors and bad arguments", async () => {
    const server = new Server({ name: "rebuno", version: "1.0.0" });
    await registerMcpTools(server, tools);
    const client = await connect(server);
    const add = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    expect(add).toMatchObject({
      content: [{ type: "text", text: '{"sum":5}' }],
      structuredContent: { sum: 5 },
    });
    expect(add.isError).toBeUndefined();
    expect(tools[0]!.calls.at(-1)!.args).toEqual({ a: 2, b: 3 });
    expect(typeof tools[0]!.calls.at(-1)!.options?.toolCallId).toBe("string");
    expect(tools[0]!.calls.at(-1)!.options?.abortSignal).toBeInstanceOf(AbortSignal);
    expect(await client.callTool({ name: "hello", arguments: { who: "mcp" } })).toMatchObject({
      content: [{ type: "text", text: "hi mcp" }],
    });
    const denied = await client.callTool({ name: "send", arguments: { to: "x" } });
    expect(denied).toEqual({
      content: [{ type: "text", text: "send not allowed. reason: outside business hours" }],
    });
    const failed = await client.callTool({ name: "fail", arguments: {} });
    expect(failed).toEqual({ content: [{ type: "text", text: "fail: upstream 502" }], isError: true });
    const before = tools[0]!.calls.length;
    const bad = await client.callTool({ name: "add", arguments: { a: "2" } });
    expect(bad.isError).toBe(true);
    expect((bad.content as Array<{ text: string }>)[0]!.text).toMatch(
      /^Invalid arguments for tool add: a: .*; b: /,
    );
    expect(tools[0]!.calls.length).toBe(before);
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toThrow(/Tool nope not found/);
  });

  it("fails the request on Blocked and aborts halt instead of returning a result", async () => {
    const server = new McpServer({ name: "rebuno", version: "1.0.0" });
    const halt = new AbortController();
    await registerMcpTools(server, tools, { halt });
    const client = await connect(server);
    await expect(client.callTool({ name: "wait", arguments: {} })).rejects.toThrow(/step blocked/);
    expect(halt.signal.reason).toBe(blocked);
  });

  it("refuses a server whose tool handlers are taken or that is already connected", async () => {
    const taken = new McpServer({ name: "x", version: "1" });
    taken.registerTool("zod_tool", { inputSchema: { q: z.string() } }, async () => ({ content: [] }));
    await expect(registerMcpTools(taken, tools)).rejects.toThrow(ConfigurationError);
    const live = new McpServer({ name: "y", version: "1" });
    await connect(live);
    await expect(registerMcpTools(live, tools)).rejects.toThrow(/before connect\(\)/);
  });
});

describe("toMcpTools", () => {
  it("describes tools with sanitised names and callable handlers", async () => {
    const defs = toMcpTools([
      makeTool("files.read", { type: "object", properties: { p: { type: "string" } } }, ({ p }) => p),
    ]);
    expect(defs[0]).toMatchObject({ name: "files_read", annotations: { idempotentHint: true } });
    expect(await defs[0]!.handler({ p: "/tmp" })).toEqual({ content: [{ type: "text", text: "/tmp" }] });
    expect(await defs[0]!.handler({ p: 1 })).toMatchObject({ isError: true });
  });
});
