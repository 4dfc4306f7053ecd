import { ToolMessage } from "@langchain/core/messages";
import { DynamicStructuredTool, tool as lcTool } from "@langchain/core/tools";
import { Blocked, ConfigurationError, ToolError } from "@rebuno/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod3";
import { type LangChainToolFactory, toLangChainTools } from "../../src/adapters/index.js";
import { makeTool } from "../schema/fixtures.js";

const lookup = makeTool(
  "lookup_order",
  z.object({ id: z.string(), verbose: z.boolean().optional() }),
  ({ id }) => ({
    id,
    status: "shipped",
  }),
);
const greet = makeTool("greet", z3.object({ name: z3.string() }), ({ name }) => `hello ${String(name)}`);

describe("toLangChainTools", () => {
  it("produces LangChain structured tools that run the Rebuno tool on a tool call", async () => {
    const [order, hello] = (await toLangChainTools([lookup, greet])) as DynamicStructuredTool[];
    expect(order).toBeInstanceOf(DynamicStructuredTool);
    expect(order!.name).toBe("lookup_order");
    expect(order!.description).toBe("lookup_order tool");
    const message = await order!.invoke({
      type: "tool_call",
      id: "call_7",
      name: "lookup_order",
      args: { id: "A1" },
    });
    expect(message).toBeInstanceOf(ToolMessage);
    expect((message as ToolMessage).tool_call_id).toBe("call_7");
    expect(JSON.parse((message as ToolMessage).content as string)).toEqual({ id: "A1", status: "shipped" });
    expect(lookup.calls.at(-1)!.args).toEqual({ id: "A1" });
    expect(lookup.calls.at(-1)!.options?.toolCallId).toBe("call_7");
    expect(await hello!.invoke({ name: "Ada" })).toBe("hello Ada");
  });

  it("lets LangChain reject arguments that break the JSON Schema", async () => {
    const before = lookup.calls.length;
    const [order] = (await toLangChainTools([lookup], {
      tool: lcTool as unknown as LangChainToolFactory,
    })) as DynamicStructuredTool[];
    await expect(order!.invoke({ id: 5 })).rejects.toThrow(
      /did not match expected schema|Received tool input/,
    );
    expect(lookup.calls.length).toBe(before);
  });

  it("passes the run's abort signal and propagates control flow and tool errors", async () => {
    const blocked = new Blocked();
    const gate = makeTool("gate", { type: "object", properties: {} }, () => {
      throw blocked;
    });
    const broken = makeTool("broken", { type: "object", properties: {} }, () => {
      throw new ToolError("disk full", { toolId: "broken" });
    });
    const halt = new AbortController();
    const [g, b] = (await toLangChainTools([gate, broken], { halt })) as DynamicStructuredTool[];
    const run = new AbortController();
    await expect(g!.invoke({}, { signal: run.signal })).rejects.toBe(blocked);
    expect(gate.calls[0]!.options?.abortSignal).toBeInstanceOf(AbortSignal);
    expect(halt.signal.reason).toBe(blocked);
    await expect(b!.invoke({})).rejects.toThrow("broken: disk full");
  });

  it("reports a missing @langchain/core as a ConfigurationError", async () => {
    const { loadOptionalPeer } = await import("../../src/adapters/load-peer.js");
    const missing = Object.assign(new Error("Cannot find package '@langchain/core'"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    await expect(
      loadOptionalPeer(["@langchain/core/tools"], () => Promise.reject(missing), "toLangChainTools"),
    ).rejects.toThrow(ConfigurationError);
    const broken = new SyntaxError("bad module");
    await expect(loadOptionalPeer(["x"], () => Promise.reject(broken), "f")).rejects.toBe(broken);
  });
});
