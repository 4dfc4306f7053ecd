/**
 * rebunoFetch against the real dev kernel: model calls become llm_call steps, replay after a
 * rerun without reaching the provider, stream through unchanged, and refusals come back as
 * rebuno_refusal responses. The provider is a local fetch function (the external service).
 */
import {
  Agent,
  type AgentOptions,
  createRebunoFetch,
  PolicyError,
  raiseForRefusal,
  Toolbox,
  tool,
} from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
});

const providerCalls: Record<string, unknown>[] = [];

async function provider(_input: unknown, init?: RequestInit): Promise<Response> {
  const body = JSON.parse(String(init?.body)) as { model: string; stream?: boolean; prompt: string };
  providerCalls.push(body);
  if (body.stream) {
    const events = ['data: {"delta":"Hel"}\n\n', 'data: {"delta":"lo"}\n\n', "data: [DONE]\n\n"];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const e of events) controller.enqueue(new TextEncoder().encode(e));
        controller.close();
      },
    });
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8" },
    });
  }
  if (body.prompt === "overloaded") return Response.json({ error: "overloaded" }, { status: 529 });
  return Response.json({ text: `echo ${body.prompt}`, usage: { input_tokens: 3, output_tokens: 2 } });
}

// #region llm-fetch
const llm = createRebunoFetch({ fetch: provider as typeof fetch });

async function complete(prompt: string, stream = false): Promise<string> {
  const res = await llm("https://llm.test/v1/complete", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m-small", prompt, stream }),
  });
  if (res.status === 403 || res.status === 429) raiseForRefusal(new Error(await res.text()));
  return stream ? res.text() : JSON.stringify({ status: res.status, body: await res.json() });
}
// #endregion

class Gate extends Toolbox {
  @tool({ input: { type: "object", properties: { what: { type: "string" } }, required: ["what"] } })
  async approve(args: { what: string }) {
    return `approved ${args.what}`;
  }
}
const gate = new Gate();

const POLICY = `
default_action: allow
rules:
  - id: review
    when: { target: approve }
    then: { decision: require_approval }
  - id: no-large-model
    when: { step_kind: llm_call, target: m-large }
    then: { decision: deny, reason: too expensive }
`;

describe("rebunoFetch", () => {
  it("passes through outside an execution", async () => {
    providerCalls.length = 0;
    expect(JSON.parse(await complete("hi"))).toEqual({
      status: 200,
      body: { text: "echo hi", usage: expect.any(Object) },
    });
    expect(providerCalls).toHaveLength(1);
  });

  it("records calls (error statuses and streams too) and replays them after a rerun", async () => {
    const seen: string[] = [];
    const chat = (options: AgentOptions) =>
      new Agent(
        "chat",
        async () => {
          const plain = await complete("hi");
          const failed = await complete("overloaded");
          const streamed = await complete("story", true);
          seen.push(plain, failed, streamed);
          // Parks the execution on an approval; after the grant the handler reruns from the top.
          return { plain, failed, streamed, gate: await gate.approve({ what: "reply" }) };
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [chat], policy: POLICY });
    providerCalls.length = 0;
    const created = await env.client.create("chat", {});
    await env.waitForStatus(created.id, "blocked");
    const [approval] = await env.client.listApprovals();
    await env.client.grantApproval(approval?.id ?? "", { decidedBy: "me" });
    const { execution: done, steps } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    // The provider saw each call once; the rerun replayed all three.
    expect(providerCalls.map((c) => c.prompt)).toEqual(["hi", "overloaded", "story"]);
    expect(seen).toHaveLength(6);
    expect(seen.slice(3)).toEqual(seen.slice(0, 3));
    expect(JSON.parse(seen[1] as string)).toEqual({ status: 529, body: { error: "overloaded" } });
    expect(seen[2]).toBe('data: {"delta":"Hel"}\n\ndata: {"delta":"lo"}\n\ndata: [DONE]\n\n');
    const llmSteps = steps.filter((s) => s.kind === "llm_call");
    expect(llmSteps.map((s) => [s.target, s.status])).toEqual([
      ["m-small", "succeeded"],
      ["m-small", "succeeded"],
      ["m-small", "succeeded"],
    ]);
    expect(llmSteps[2]?.result).toEqual({
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8" },
      body: seen[2],
    });
  });

  it("answers a denial with a rebuno_refusal response that raiseForRefusal maps to PolicyError", async () => {
    const mapped: unknown[] = [];
    const big = (options: AgentOptions) =>
      new Agent(
        "big",
        async () => {
          const res = await llm("https://llm.test/v1/complete", {
            method: "POST",
            body: JSON.stringify({ model: "m-large", prompt: "x" }),
          });
          const text = await res.text();
          try {
            raiseForRefusal(new Error(text));
          } catch (err) {
            mapped.push(res.status, PolicyError.isInstance(err), (err as PolicyError).reason);
            return "handled";
          }
          return "not refused";
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [big], policy: POLICY });
    providerCalls.length = 0;
    const { execution: done } = await env.run("big", {});
    // The handler swallowed the denial and returned; the remembered denial still fails it (G12).
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe("policy_denied: too expensive");
    expect(providerCalls).toHaveLength(0);
    expect(mapped).toEqual([403, true, "too expensive"]);
  });
});
