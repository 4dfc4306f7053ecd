/** rebunoFetch streaming details with the kernel-free context: deltas, early cancel, refusals. */
import { Blocked, createRebunoFetch, raiseForRefusal } from "@rebuno/sdk";
import { ToolTestContext } from "@rebuno/testing";
import { describe, expect, it } from "vitest";

function sse(chunks: string[]): typeof fetch {
  return (async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    )) as typeof fetch;
}

const request = { method: "POST", body: JSON.stringify({ model: "m", messages: [] }) };

describe("rebunoFetch streams", () => {
  it("publishes deltas in 1750-char slices with seq from 0 and records the whole once", async () => {
    const big = "x".repeat(4000);
    const llm = createRebunoFetch({ fetch: sse([big, "tail"]) });
    const t = new ToolTestContext();
    const text = await t.run(async () => (await llm("https://llm.test", request)).text());
    expect(text).toBe(`${big}tail`);
    expect(t.port.deltas.map((d) => d.seq)).toEqual([0, 1, 2, 3]);
    expect(t.port.deltas.map((d) => d.data.length)).toEqual([1750, 1750, 500, 4]);
    expect(t.port.deltas.map((d) => d.data).join("")).toBe(text);
    expect(t.completed).toHaveLength(1);
    expect((t.completed[0]?.result as { body: string } | undefined)?.body).toBe(text);
  });

  it("records what was read when the consumer cancels early", async () => {
    const llm = createRebunoFetch({ fetch: sse(["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"]) });
    const t = new ToolTestContext();
    await t.run(async () => {
      const reader = (await llm("https://llm.test", request)).body?.getReader();
      await reader?.read();
      await reader?.cancel();
    });
    expect(t.completed).toHaveLength(1);
    expect((t.completed[0]?.result as { body: string } | undefined)?.body).toBe("data: 1\n\n");
  });

  it("turns a block into a refusal response and remembers it on the context", async () => {
    let called = 0;
    const llm = createRebunoFetch({
      fetch: (async () => {
        called++;
        return Response.json({});
      }) as typeof fetch,
    });
    const t = new ToolTestContext().block("m", "appr-9");
    const res = await t.run(() => llm("https://llm.test", request));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: { type: "rebuno_refusal", message: "rebuno_refusal: blocked" },
    });
    expect(Blocked.isInstance(t.context.suspension)).toBe(true);
    expect(called).toBe(0);
    expect(() => raiseForRefusal(new Error("rebuno_refusal: blocked"))).toThrow(Blocked);
  });

  it("passes non-JSON bodies through unrecorded", async () => {
    const llm = createRebunoFetch({ fetch: (async () => new Response("ok")) as typeof fetch });
    const t = new ToolTestContext();
    const res = await t.run(() => llm("https://llm.test", { method: "POST", body: "plain text" }));
    expect(await res.text()).toBe("ok");
    expect(t.submitted).toHaveLength(0);
  });
});
