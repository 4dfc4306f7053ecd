import { Blocked } from "@rebuno/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type MastraToolDefinition, toMastraTools } from "../../src/adapters/index.js";
import { makeTool } from "../schema/fixtures.js";

// @mastra/core 1.x requires Node >= 22.13 (docs/design/dependencies.md), so these tests drive the
// definitions through both documented execute signatures instead of a Mastra Agent.
const zodInput = z.object({ sku: z.string() });
const stock = makeTool("stock.level", zodInput, ({ sku }) => ({ sku, level: 4 }));
const raw = makeTool(
  "ping",
  { type: "object", properties: { host: { type: "string" } }, required: ["host"] },
  ({ host }) => `pong ${String(host)}`,
);

describe("toMastraTools", () => {
  it("builds createTool definitions keyed by sanitised id (Mastra >= 1.0 signature)", async () => {
    const tools = toMastraTools([stock, raw]) as Record<string, MastraToolDefinition>;
    expect(Object.keys(tools)).toEqual(["stock_level", "ping"]);
    expect(tools.stock_level!.id).toBe("stock_level");
    expect(tools.stock_level!.description).toBe("stock.level tool");
    // The tool's own zod schema is handed over (Mastra reads zod natively)…
    expect(tools.stock_level!.inputSchema).toBe(zodInput);
    // …and a JSON-Schema tool gets a Standard JSON Schema wrapper that validates.
    const std = tools.ping!.inputSchema["~standard"];
    expect(std.jsonSchema?.input({ target: "draft-07" })).toMatchObject({ required: ["host"] });
    expect(await std.validate({ host: 1 })).toHaveProperty("issues");
    const abort = new AbortController();
    const run = tools.stock_level!.execute as (input: unknown, ctx: unknown) => Promise<unknown>;
    expect(await run({ sku: "X" }, { abortSignal: abort.signal, agent: { toolCallId: "tc-1" } })).toEqual({
      sku: "X",
      level: 4,
    });
    expect(stock.calls.at(-1)).toEqual({
      args: { sku: "X" },
      options: { toolCallId: "tc-1", abortSignal: abort.signal },
    });
  });

  it("supports Mastra 0.x's single-object signature without recording the options object", async () => {
    const tools = toMastraTools([raw], { signature: "v0" }) as Record<string, MastraToolDefinition>;
    const run = tools.ping!.execute as (opts: unknown) => Promise<unknown>;
    expect(await run({ context: { host: "db" }, runtimeContext: new Map(), toolCallId: "t0" })).toBe(
      "pong db",
    );
    expect(raw.calls.at(-1)).toEqual({ args: { host: "db" }, options: { toolCallId: "t0" } });
  });

  it("passes definitions through createTool and aborts halt on control flow", async () => {
    const seen: MastraToolDefinition[] = [];
    const blocked = new Blocked();
    const gate = makeTool("gate", { type: "object", properties: {} }, () => {
      throw blocked;
    });
    const halt = new AbortController();
    const tools = toMastraTools([gate], {
      halt,
      createTool: (d) => {
        seen.push(d);
        return { wrapped: d };
      },
    }) as Record<string, { wrapped: MastraToolDefinition }>;
    expect(seen.map((d) => d.id)).toEqual(["gate"]);
    const run = tools.gate!.wrapped.execute as (input: unknown) => Promise<unknown>;
    await expect(run({})).rejects.toBe(blocked);
    expect(halt.signal.reason).toBe(blocked);
  });
});
