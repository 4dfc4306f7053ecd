/** Agents and tools against the real dev kernel (in process, through @rebuno/testing). */
import {
  Agent,
  type AgentOptions,
  agent,
  defineTool,
  execution,
  PolicyError,
  previous,
  Result,
  step,
  Toolbox,
  ToolError,
  tool,
} from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

const ChargeInput = z.object({ card: z.string(), cents: z.number().int().positive() });

class Billing extends Toolbox {
  readonly calls: string[] = [];

  @tool("charge", { idempotency: "at_most_once", input: ChargeInput, description: "Charge a card" })
  async charge(args: z.infer<typeof ChargeInput>) {
    this.calls.push(`charge:${args.cents}`);
    return { receipt: `r-${args.cents}` };
  }

  @tool({ input: z.object({ query: z.string(), limit: z.number().int().optional() }) })
  async search(args: { query: string; limit?: number }) {
    this.calls.push(`search:${args.query}`);
    return [`${args.query}-1`];
  }

  @tool async badResult() {
    return { when: new Date(0) };
  }
}

const billing = new Billing();

class Support extends Agent<{ question: string; cents?: number }, unknown> {
  static override id = "support";
  override async run(input: { question: string; cents?: number }) {
    const hits = await billing.search({ query: input.question });
    const charged =
      input.cents === undefined ? null : await billing.charge({ card: "4242", cents: input.cents });
    return { hits, charged, attempt: execution().dispatchAttempt };
  }
}

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
  billing.calls.length = 0;
});

describe("agent on the dev kernel", () => {
  it("runs a class-based agent; each tool call is a recorded tool_call step without this", async () => {
    env = await TestEnvironment.create({ agents: [Support] });
    const { execution: done, steps } = await env.run(Support, { question: "refund", cents: 500 });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ hits: ["refund-1"], charged: { receipt: "r-500" }, attempt: 1 });
    expect(steps.map((s) => [s.kind, s.target, s.status, s.idempotency])).toEqual([
      ["tool_call", "search", "succeeded", "safe_to_retry"],
      ["tool_call", "charge", "succeeded", "at_most_once"],
    ]);
    const charge = steps.find((s) => s.target === "charge");
    expect(charge?.args).toEqual({ card: "4242", cents: 500 });
    expect(billing.calls).toEqual(["search:refund", "charge:500"]);
  });
});

const POLICY = `
default_action: allow
rules:
  - id: no-big-charges
    when:
      target: charge
      arguments:
        card: { equals: "0000" }
    then: { decision: deny, reason: card is blocked }
  - id: review-charges
    when:
      target: charge
      arguments:
        card: { equals: "9999" }
    then:
      decision: require_approval
      approval_config: { message: review this charge }
  - id: no-risk
    when: { target: risky, step_kind: local }
    then: { decision: deny, reason: no risk today }
`;

// #region charger
class Charger extends Agent<{ card: string; cents: number }, unknown> {
  static override id = "charger";
  override async run(input: { card: string; cents: number }) {
    try {
      return await billing.charge({ card: input.card, cents: input.cents });
    } catch (error) {
      // Called directly from code, a denied tool throws ToolError with reason "denied".
      if (ToolError.isInstance(error) && error.reason === "denied") return { declined: error.policyReason };
      throw error;
    }
  }
}
// #endregion

describe("policy decisions", () => {
  it("throws ToolError (reason denied) from a direct call of a denied tool; the body never runs", async () => {
    env = await TestEnvironment.create({ agents: [Charger], policy: POLICY });
    const { execution: done, steps } = await env.run(Charger, { card: "0000", cents: 5 });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ declined: "card is blocked" });
    expect(steps.map((s) => s.status)).toEqual(["denied"]);
    expect(billing.calls).toEqual([]);
  });

  it("blocks on an approval, then runs the body once after the grant and completes", async () => {
    // #region approval
    env = await TestEnvironment.create({ agents: [Charger], policy: POLICY });
    const created = await env.client.create("charger", { card: "9999", cents: 70 });
    await env.waitForStatus(created.id, "blocked");
    expect(billing.calls).toEqual([]);
    const [approval] = await env.client.listApprovals({ status: "pending" });
    expect(approval?.executionId).toBe(created.id);
    await env.client.grantApproval(approval?.id ?? "", { decidedBy: "ops@example.com", rationale: "ok" });
    const { execution: done, steps } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ receipt: "r-70" });
    expect(billing.calls).toEqual(["charge:70"]);
    // #endregion
    expect(steps.map((s) => [s.target, s.status])).toEqual([["charge", "succeeded"]]);
  });

  it("fails the execution with policy_denied when step() is denied, even if the handler swallows it (G12)", async () => {
    const swallow = (options: AgentOptions) =>
      new Agent(
        "swallow",
        async () => {
          try {
            await step("risky", () => 1);
          } catch (err) {
            if (!PolicyError.isInstance(err)) throw err;
          }
          return "pretend all is well";
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [swallow], policy: POLICY });
    const { execution: done } = await env.run("swallow", {});
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe("policy_denied: no risk today");
  });
});

describe("strict JSON and validation", () => {
  it("rejects non-JSON args before submitting: the execution fails naming the path", async () => {
    // A tool without an input schema, so the NaN reaches the strict-JSON check unvalidated.
    const probe = defineTool({ name: "probe", execute: async (args: { limit: number }) => args });
    const nan = (options: AgentOptions) => new Agent("nan", () => probe({ limit: Number.NaN }), options);
    env = await TestEnvironment.create({ agents: [nan] });
    const { execution: done, steps } = await env.run("nan", {});
    expect(done.status).toBe("failed");
    expect(done.failureReason).toMatch(/^agent_error: TypeError: args\.limit /);
    expect(steps).toHaveLength(0);
  });

  it("fails the step (not left executing) when a result is not JSON", async () => {
    const bad = (options: AgentOptions) => new Agent("bad", () => billing.badResult(), options);
    env = await TestEnvironment.create({ agents: [bad] });
    const { execution: done, steps } = await env.run("bad", {});
    expect(done.status).toBe("failed");
    expect(done.failureReason).toMatch(/^tool_error: badResult: result\.when /);
    expect(steps.map((s) => s.status)).toEqual(["failed"]);
  });

  it("fails with input_invalid when the input schema rejects the input", async () => {
    // #region agent-decorator
    @agent("typed", { inputSchema: z.object({ n: z.number() }) })
    class Typed extends Agent<{ n: number }, number> {
      override run(input: { n: number }) {
        return input.n * 2;
      }
    }
    // #endregion
    env = await TestEnvironment.create({ agents: [Typed] });
    expect((await env.run(Typed, { n: 21 })).output).toBe(42);
    const { execution: done } = await env.run(Typed, { n: "x" });
    expect(done.status).toBe("failed");
    expect(done.failureReason).toMatch(/^input_invalid: n: /);
  });

  it("returns the same JSON-normalized value on the first run as a replay would", async () => {
    const seen: unknown[] = [];
    class Clock extends Toolbox {
      @tool async now() {
        return { at: new Date(0).toISOString(), skipped: undefined, list: [1, 2] };
      }
    }
    const clock = new Clock();
    const norm = (options: AgentOptions) =>
      new Agent(
        "norm",
        async () => {
          const value = await clock.now();
          seen.push(value);
          return value;
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [norm] });
    const { steps } = await env.run("norm", {});
    expect(seen[0]).toEqual(steps[0]?.result);
    expect(Object.hasOwn(seen[0] as object, "skipped")).toBe(false);
  });
});

describe("concurrency and sessions", () => {
  it("gives parallel identical calls distinct steps", async () => {
    const par = (options: AgentOptions) =>
      new Agent(
        "par",
        () =>
          Promise.all([
            billing.search({ query: "same" }),
            billing.search({ query: "same" }),
            billing.search({ query: "same" }),
          ]),
        options,
      );
    env = await TestEnvironment.create({ agents: [par] });
    const { execution: done, steps } = await env.run("par", {});
    expect(done.status).toBe("completed");
    expect(steps).toHaveLength(3);
    expect(new Set(steps.map((s) => s.stepId)).size).toBe(3);
    expect(steps.map((s) => s.occurrence).sort()).toEqual([0, 1, 2]);
  });

  it("stores Result state for the next session turn and reads it with previous()", async () => {
    // #region result-state
    class Counter extends Agent<Record<string, never>, number> {
      static override id = "counter";
      override async run() {
        const prior = (await previous<{ turns: number }>()) ?? { turns: 0 };
        const turns = prior.turns + 1;
        return new Result({ output: turns, state: { turns } });
      }
    }
    // #endregion
    env = await TestEnvironment.create({ agents: [Counter] });
    expect((await env.run(Counter, {}, { session: "chat-1" })).output).toBe(1);
    expect((await env.run(Counter, {}, { session: "chat-1" })).output).toBe(2);
    expect((await env.run(Counter, {}, { session: "chat-2" })).output).toBe(1);
  });
});
