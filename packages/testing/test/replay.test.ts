/**
 * Offline replay against recordings exported from the real dev kernel (in process): a run
 * follows its own recording with no kernel and no provider; a changed argument, an edited or
 * truncated file, and another format version are reported exactly.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseRecording, type Recording, RecordingError } from "@rebuno/protocol";
import { Agent, createRebunoFetch, step, Toolbox, tool } from "@rebuno/sdk";
import {
  assertFollowsRecording,
  formatReplayReport,
  ReplayDivergenceError,
  replayRecording,
  TestEnvironment,
} from "@rebuno/testing";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const object = (properties: Record<string, { type: string }>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
});

// Counts real tool and provider calls: a replay must make none.
const calls = { quote: 0, refund: 0, provider: 0 };

class Shop extends Toolbox {
  @tool("quote", { input: object({ sku: { type: "string" }, quantity: { type: "number" } }) })
  async quote(args: { sku: string; quantity: number }) {
    calls.quote++;
    return { sku: args.sku, cents: 250 * args.quantity };
  }
  @tool("refund", { input: object({ cents: { type: "number" } }) })
  async refund(args: { cents: number }) {
    calls.refund++;
    return { refunded: args.cents };
  }
}

// A provider that streams its answer as SSE: the recording holds the whole text (docs/protocol.md §14.3).
const provider = createRebunoFetch({
  fetch: async () => {
    calls.provider++;
    return new Response('data: {"text":"tea is nice"}\n\ndata: [DONE]\n\n', {
      headers: { "content-type": "text/event-stream" },
    });
  },
});

type ShopInput = { sku: string; quantity: number };

function shopHandler(quantityFor: (input: ShopInput) => number) {
  const shop = new Shop();
  return async (input: ShopInput) => {
    const quote = await shop.quote({ sku: input.sku, quantity: quantityFor(input) });
    const total = await step("total", () => quote.cents + 100);
    const answer = await provider("https://llm.example/v1/chat", {
      method: "POST",
      body: JSON.stringify({ model: "scripted", messages: [{ role: "user", content: input.sku }] }),
    });
    const said = await answer.text();
    const refund = await shop.tool("refund")!.execute({ cents: total }); // denied by policy: a string
    return { total, said, refund };
  };
}

const POLICY = `default_action: allow
rules:
  - id: no-refunds
    when: { target: refund }
    then: { decision: deny, reason: refunds are manual }
`;

let env: TestEnvironment;
let recording: Recording;

beforeAll(async () => {
  env = await TestEnvironment.create({
    agents: [
      (o) =>
        new Agent(
          "shop",
          shopHandler((i) => i.quantity),
          o,
        ),
    ],
    policy: POLICY,
  });
  const run = await env.run("shop", { sku: "tea", quantity: 2 });
  expect(run.execution.status).toBe("completed");
  recording = await env.client.exportRecording(run.execution.id);
});

afterAll(async () => {
  await env?.teardown();
});

describe("recordings", () => {
  it("hold the steps in recording order with args, results, decisions, rules and reasons", () => {
    expect(recording.format).toBe("rebuno.recording/1");
    expect(recording.steps.map((s) => [s.kind, s.target, s.status, s.decision])).toEqual([
      ["tool_call", "quote", "succeeded", "allowed"],
      ["local", "total", "succeeded", "allowed"],
      ["llm_call", "scripted", "succeeded", "allowed"],
      ["tool_call", "refund", "denied", "denied"],
    ]);
    expect(recording.steps[0]).toMatchObject({
      args: { sku: "tea", quantity: 2 },
      result: { sku: "tea", cents: 500 },
    });
    expect(recording.steps[1]).toMatchObject({ result: 600, ruleId: "local" });
    expect(recording.steps[3]).toMatchObject({ ruleId: "no-refunds", reason: "refunds are manual" });
    expect(recording.execution).toMatchObject({
      agentId: "shop",
      status: "completed",
      input: { sku: "tea", quantity: 2 },
    });
    expect(recording.events.at(-1)?.type).toBe("execution.completed");
  });

  it("validate against docs/recordings.schema.json", () => {
    const schemaPath = fileURLToPath(new URL("../../../docs/recordings.schema.json", import.meta.url));
    const validate = new Ajv({ strict: false }).compile(JSON.parse(readFileSync(schemaPath, "utf8")));
    const roundTripped = JSON.parse(JSON.stringify(recording));
    expect(validate(roundTripped), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...roundTripped, format: "rebuno.recording/2" })).toBe(false);
  });
});

describe("replayRecording", () => {
  it("follows its own recording offline: no tool, provider or kernel call", async () => {
    const before = { ...calls };
    const result = await replayRecording(
      shopHandler((i) => i.quantity),
      JSON.stringify(recording),
    );
    expect(formatReplayReport(result)).toBe("followed the recording (4 steps replayed)");
    expect(result.followed).toBe(true);
    expect(result.outcome).toEqual({
      status: "completed",
      output: {
        total: 600,
        said: 'data: {"text":"tea is nice"}\n\ndata: [DONE]\n\n',
        refund: expect.stringContaining("refunds are manual"),
      },
    });
    assertFollowsRecording(result);
    expect(calls).toEqual(before);
  });

  it("reports a changed argument with both argument sets, the unreached steps and the outcome", async () => {
    const result = await replayRecording(
      shopHandler((i) => i.quantity + 1),
      recording,
    );
    expect(result.followed).toBe(false);
    expect(result.divergence).toEqual({
      index: 0,
      recorded: { kind: "tool_call", target: "quote", args: { sku: "tea", quantity: 2 } },
      submitted: { kind: "tool_call", target: "quote", args: { sku: "tea", quantity: 3 } },
      argsDiff: [{ path: "$.quantity", recorded: 2, submitted: 3 }],
    });
    expect(result.unreached.map((s) => s.target)).toEqual(["quote", "total", "scripted", "refund"]);
    expect(result.outcome).toEqual({ status: "stopped" });
    expect(() => assertFollowsRecording(result)).toThrow(ReplayDivergenceError);
    expect(formatReplayReport(result)).toContain("args $.quantity: 2 → 3");
  });

  it("runs new steps through scripted tools when asked", async () => {
    const before = calls.quote;
    const result = await replayRecording(
      shopHandler((i) => i.quantity + 1),
      recording,
      {
        newSteps: { script: { quote: [{ kind: "replay", result: { sku: "tea", cents: 500 } }] } },
      },
    );
    expect(result.newSteps.map((s) => [s.target, s.args])).toEqual([["quote", { sku: "tea", quantity: 3 }]]);
    expect(result.unreached.map((s) => s.target)).toEqual(["quote"]);
    expect(result.sameOutcome).toBe(true);
    expect(calls.quote).toBe(before);
  });

  it("refuses another format version, an edited argument and a truncated file, naming the cause", async () => {
    const agent = shopHandler((i) => i.quantity);
    const other = JSON.stringify({ ...recording, format: "rebuno.recording/2" });
    await expect(replayRecording(agent, other)).rejects.toMatchObject({
      name: "RecordingError",
      problem: "unsupported_format",
    });
    const edited = structuredClone(recording) as unknown as { steps: { args: unknown }[] };
    edited.steps[0]!.args = { sku: "tea", quantity: 5 };
    const error = await replayRecording(agent, edited as unknown as Recording).catch((e: unknown) => e);
    expect(RecordingError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      problem: "step_mismatch",
      stepId: recording.steps[0]!.stepId,
      target: "quote",
    });
    const text = JSON.stringify(recording);
    expect(() => parseRecording(text.slice(0, text.length / 2))).toThrow(/not JSON/);
    const noSteps = JSON.stringify({ ...recording, steps: undefined });
    expect(() => parseRecording(noSteps)).toThrow(
      expect.objectContaining({ problem: "malformed", path: "$.steps" }),
    );
  });
});

describe("replayRecording: approvals, failures and outcomes", () => {
  class Payments extends Toolbox {
    @tool("payout", { input: object({ cents: { type: "number" } }), idempotency: "at_most_once" })
    async payout(args: { cents: number }) {
      return { paid: args.cents };
    }
    @tool("flaky", { input: object({ n: { type: "number" } }) })
    async flaky(_args: { n: number }): Promise<string> {
      throw new Error("upstream 503");
    }
  }
  const payments = new Payments();
  const payHandler = (suffix: string) => async () => {
    let note: string;
    try {
      note = await payments.flaky({ n: 1 });
    } catch (error) {
      note = `flaky failed: ${(error as Error).message}`;
    }
    const paid = await payments.payout({ cents: 700 });
    return `${note}; paid ${paid.paid}${suffix}`;
  };
  let payEnv: TestEnvironment;
  let blocked: Recording;
  let granted: Recording;

  beforeAll(async () => {
    payEnv = await TestEnvironment.create({
      agents: [(o) => new Agent("payer", payHandler(""), o)],
      policy: `default_action: allow
rules:
  - id: payouts-need-a-person
    when: { target: payout }
    then: { decision: require_approval }
`,
    });
    const created = await payEnv.client.create("payer", null);
    await payEnv.waitForStatus(created.id, "blocked");
    blocked = await payEnv.client.exportRecording(created.id);
    const [approval] = await payEnv.client.listApprovals();
    await payEnv.client.grantApproval(approval!.id, { decidedBy: "ops", rationale: "ok" });
    await payEnv.wait(created.id);
    granted = await payEnv.client.exportRecording(created.id);
  });

  afterAll(async () => {
    await payEnv?.teardown();
  });

  it("records the approval outcome and the failed step's error", () => {
    expect(blocked.steps.map((s) => [s.target, s.status, s.decision, s.approval?.status])).toEqual([
      ["flaky", "failed", "allowed", undefined],
      ["payout", "awaiting_approval", "awaiting_approval", "pending"],
    ]);
    expect(granted.steps[1]).toMatchObject({
      status: "succeeded",
      result: { paid: 700 },
      approval: { status: "granted", decidedBy: "ops", rationale: "ok" },
    });
    expect(granted.steps[0]!.error).toMatchObject({ message: expect.stringContaining("upstream 503") });
  });

  it("a step still awaiting approval parks the handler, as on the kernel; a granted one replays its result", async () => {
    const parked = await replayRecording(payHandler(""), blocked);
    expect(parked).toMatchObject({ followed: true, outcome: { status: "blocked" } });
    const done = await replayRecording(payHandler(""), granted);
    expect(formatReplayReport(done)).toBe("followed the recording (2 steps replayed)");
    expect(done.outcome).toEqual({
      status: "completed",
      output: expect.stringMatching(/^flaky failed: .*upstream 503.*; paid 700$/),
    });
  });

  it("the same steps with a different output are reported as a different outcome only", async () => {
    const result = await replayRecording(payHandler("!"), granted);
    expect(result).toMatchObject({
      followed: false,
      divergence: undefined,
      unreached: [],
      sameOutcome: false,
    });
    expect(formatReplayReport(result)).toMatch(
      /^the replay left the recording:\n {2}outcome: recorded completed ".*paid 700", replayed completed ".*paid 700!"$/,
    );
  });
});
