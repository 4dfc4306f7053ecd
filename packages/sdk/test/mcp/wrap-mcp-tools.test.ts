import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ConfigurationError, ToolError } from "@rebuno/protocol";
import { ToolTestContext } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { flattenMcpResult, wrapMcpTool, wrapMcpTools } from "../../src/mcp/index.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function connect(server: McpServer | Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "agent", version: "1.0.0" });
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return client;
}

/** A real MCP server with a few zod tools; `received` logs what the server was called with. */
function mathServer() {
  const received: Array<[string, unknown]> = [];
  const server = new McpServer({ name: "math", version: "1.0.0" });
  server.registerTool(
    "add",
    {
      description: "Add numbers",
      inputSchema: { a: z.number(), b: z.number(), note: z.string().optional() },
    },
    async (args) => {
      received.push(["add", args]);
      return { content: [{ type: "text", text: String(args.a + args.b) }] };
    },
  );
  server.registerTool(
    "stats",
    { inputSchema: { xs: z.array(z.number()) }, outputSchema: { mean: z.number() } },
    async ({ xs }) => {
      received.push(["stats", { xs }]);
      const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
      return { content: [{ type: "text", text: `mean ${mean}` }], structuredContent: { mean } };
    },
  );
  server.registerTool("divide", { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
    received.push(["divide", { a, b }]);
    if (b === 0) return { content: [{ type: "text", text: "division by zero" }], isError: true };
    return { content: [{ type: "text", text: String(a / b) }] };
  });
  return { server, received };
}

describe("wrapMcpTools against a real MCP server", () => {
  it("wraps every listed tool with its schema and records each call as a step", async () => {
    const { server, received } = mathServer();
    const client = await connect(server);
    const tools = await wrapMcpTools(client, {
      prefix: "math.v1",
      idempotency: (d) => (d.name === "add" ? "safe_to_retry" : "at_most_once"),
      resources: ["ledger"],
    });
    expect(tools.map((t) => t.name)).toEqual(["math_v1_add", "math_v1_stats", "math_v1_divide"]);
    const add = tools[0]!;
    expect(add.description).toBe("Add numbers");
    expect(add.inputSchema).toMatchObject({
      type: "object",
      properties: { a: { type: "number" } },
      required: ["a", "b"],
    });
    expect(tools.map((t) => t.idempotency)).toEqual(["safe_to_retry", "at_most_once", "at_most_once"]);

    const t = new ToolTestContext();
    // The model filled the optional `note` with null: stripped before recording and calling.
    expect(await t.run(() => add({ a: 2, b: 3, note: null }))).toBe("5");
    expect(await t.run(() => tools[1]!({ xs: [1, 2, 6] }))).toEqual({ mean: 3 });
    expect(received).toEqual([
      ["add", { a: 2, b: 3 }],
      ["stats", { xs: [1, 2, 6] }],
    ]);
    expect(t.submitted.map((s) => [s.target, s.args, s.idempotency, s.resources])).toEqual([
      ["math_v1_add", { a: 2, b: 3 }, "safe_to_retry", ["ledger"]],
      ["math_v1_stats", { xs: [1, 2, 6] }, "at_most_once", ["ledger"]],
    ]);
    expect(t.completed.map((c) => c.result)).toEqual(["5", { mean: 3 }]);
  });

  it("fails the step with ToolError on isError results (G8), or records the text with onError: return", async () => {
    const { server, received } = mathServer();
    const client = await connect(server);
    const [divide] = await wrapMcpTools(client, { include: ["divide"] });
    const t = new ToolTestContext();
    const error = await t.run(() => divide!({ a: 1, b: 0 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toBe("divide: division by zero");
    expect(t.failed).toHaveLength(1);
    expect(t.completed).toHaveLength(0);

    const [lenient] = await wrapMcpTools(client, { include: (d) => d.name === "divide", onError: "return" });
    const t2 = new ToolTestContext();
    expect(await t2.run(() => lenient!({ a: 1, b: 0 }))).toBe("division by zero");
    expect(t2.completed).toHaveLength(1);
    expect(received).toHaveLength(2);
  });

  it("does not call the server for denied or replayed steps", async () => {
    const { server, received } = mathServer();
    const client = await connect(server);
    const [add] = await wrapMcpTools(client, { include: ["add"] });
    const t = new ToolTestContext();
    t.deny("add", "math is closed").replay("add", "42");
    expect(await t.run(() => add!.execute({ a: 1, b: 1 }))).toBe("add not allowed. reason: math is closed");
    expect(await t.run(() => add!({ a: 1, b: 1 }))).toBe("42");
    expect(received).toEqual([]);
  });

  it("applies transformArgs after null stripping and uses custom toResult", async () => {
    const { server, received } = mathServer();
    const client = await connect(server);
    const [add] = await wrapMcpTools(client, {
      include: ["add"],
      transformArgs: (args) => ({ ...args, b: Number(args.b ?? 0) + 1 }),
      toResult: (r) => Number(flattenMcpResult(r)),
    });
    const t = new ToolTestContext();
    expect(await t.run(() => add!({ a: 1, b: null }))).toBe(2);
    expect(received).toEqual([["add", { a: 1, b: 1 }]]);
    expect(t.submitted[0]!.args).toEqual({ a: 1, b: 1 });
  });

  it("reads every page of a paginated tools/list", async () => {
    const server = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { tools: {} } });
    const all = ["t1", "t2", "t3"].map((name) => ({
      name,
      inputSchema: { type: "object" as const, properties: {} },
    }));
    server.setRequestHandler(ListToolsRequestSchema, async (req) => {
      const start = Number(req.params?.cursor ?? 0);
      const next = start + 2 < all.length ? String(start + 2) : undefined;
      return { tools: all.slice(start, start + 2), ...(next === undefined ? {} : { nextCursor: next }) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req) => ({
      content: [{ type: "text", text: req.params.name }],
    }));
    const client = await connect(server);
    const tools = await wrapMcpTools(client);
    expect(tools.map((t) => t.name)).toEqual(["t1", "t2", "t3"]);
    expect(await new ToolTestContext().run(() => tools[2]!({}))).toBe("t3");
    await expect(wrapMcpTools(client, { include: ["t9"] })).rejects.toThrow(/no tool named 't9'/);
  });

  it("refuses colliding exported names and non-object schemas", () => {
    const client = { listTools: async () => ({ tools: [] }), callTool: async () => ({}) };
    expect(wrapMcpTool(client, { name: "read file" }, { prefix: "fs" }).name).toBe("fs_read_file");
    expect(() => wrapMcpTool(client, { name: "x", inputSchema: { type: "array" } })).toThrow(
      ConfigurationError,
    );
  });
});

describe("flattenMcpResult", () => {
  it("prefers structured content, joins text blocks, and passes other values through", () => {
    expect(flattenMcpResult({ content: [{ type: "text", text: "a" }], structuredContent: { n: 1 } })).toEqual(
      { n: 1 },
    );
    expect(
      flattenMcpResult({
        content: [
          { type: "text", text: "a" },
          { type: "image", data: "x", mimeType: "image/png" },
        ],
      }),
    ).toBe('a\n{"type":"image","data":"x","mimeType":"image/png"}');
    expect(flattenMcpResult({ content: [] })).toBe("");
    expect(flattenMcpResult({ toolResult: 7 })).toBe(7);
    expect(flattenMcpResult("plain")).toBe("plain");
  });
});
