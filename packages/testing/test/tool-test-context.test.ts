/**
 * The SDK call path exercised through the kernel-free ToolTestContext: scripted decisions in,
 * submissions and outcomes out.
 */
import {
  Blocked,
  defineTool,
  execution,
  NetworkError,
  PolicyError,
  RateLimited,
  step,
  subagent,
  Terminated,
  Toolbox,
  ToolError,
  tool,
  ValidationError,
  wrapTool,
} from "@rebuno/sdk";
import { ToolTestContext, withToolContext } from "@rebuno/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";

class Billing extends Toolbox {
  readonly charges: number[] = [];

  @tool("charge", { idempotency: "at_most_once", input: z.object({ cents: z.number().int().positive() }) })
  async charge(args: { cents: number }) {
    this.charges.push(args.cents);
    return { ok: true, cents: args.cents, at: new Date(0).toISOString() };
  }

  @tool({ input: { type: "object" } })
  async echo(args: unknown) {
    return args;
  }

  @tool async broken() {
    throw new Error("card declined");
  }

  @tool async badResult() {
    return { when: new Date(0) };
  }

  @tool async nested() {
    return (await this.echo({ inner: true })) as unknown;
  }
}

describe("tool calls", () => {
  it("proceeds, runs the body with this, records args without this, returns the normalized result", async () => {
    const t = new ToolTestContext();
    const billing = new Billing();
    const out = await t.run(() => billing.charge({ cents: 500 }));
    expect(out).toEqual({ ok: true, cents: 500, at: "1970-01-01T00:00:00.000Z" });
    expect(billing.charges).toEqual([500]);
    expect(t.submitted).toHaveLength(1);
    expect(t.submitted[0]).toMatchObject({
      kind: "tool_call",
      target: "charge",
      args: { cents: 500 },
      idempotency: "at_most_once",
      decision: "proceed",
    });
    expect(t.completed[0]?.result).toEqual(out);
  });

  // #region unit-denial
  it("denies: a direct call throws ToolError (reason denied); execute gives the LLM's string", async () => {
    const t = new ToolTestContext().deny("charge", "over the limit").deny("charge", "over the limit");
    const billing = new Billing();
    const err = await t.run(() => billing.charge({ cents: 5 })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "ToolError", reason: "denied", policyReason: "over the limit" });
    const out = await t.run(() => billing.tool("charge")?.execute({ cents: 5 }));
    expect(out).toBe("charge not allowed. reason: over the limit");
    expect(billing.charges).toEqual([]);
    expect(t.context.denial).toBeUndefined();
  });
  // #endregion

  it("submits nothing when the framework's abort signal already fired", async () => {
    const t = new ToolTestContext();
    const billing = new Billing();
    const controller = new AbortController();
    controller.abort(new Error("user pressed stop"));
    const charge = billing.tools.find((x) => x.name === "charge")!;
    await expect(
      t.run(() => charge.execute({ cents: 5 }, { toolCallId: "call_1", abortSignal: controller.signal })),
    ).rejects.toThrow("user pressed stop");
    expect(t.submitted).toEqual([]);
    expect(billing.charges).toEqual([]);
    await expect(t.run(() => charge.execute({ cents: 6 }, { toolCallId: "call_2" }))).resolves.toMatchObject({
      cents: 6,
    });
  });

  it("honours a custom denial formatter (which may throw)", async () => {
    const strict = defineTool({
      name: "strict",
      formatDenial: (_name, err) => {
        throw err;
      },
      execute: () => 1,
    });
    const t = new ToolTestContext().deny("strict", "nope", "rule-1");
    const err = await t.run(() => strict.execute({})).catch((e: unknown) => e);
    expect(PolicyError.isInstance(err)).toBe(true);
    expect((err as PolicyError).ruleId).toBe("rule-1");
  });

  // #region unit-replay
  it("replays a recorded value without running the body", async () => {
    const t = new ToolTestContext().replay("charge", { ok: "recorded" });
    const billing = new Billing();
    expect(await t.run(() => billing.charge({ cents: 1 }))).toEqual({ ok: "recorded" });
    expect(billing.charges).toEqual([]);
    expect(t.completed).toHaveLength(0);
  });
  // #endregion

  it("turns a replayed indeterminate failure into ToolError with the documented message", async () => {
    const t = new ToolTestContext().replayError("charge", {
      reason: "indeterminate",
      message: "outcome unknown: this may already have taken effect. Check the state before continuing.",
    });
    const err = await t.run(() => new Billing().charge({ cents: 1 })).catch((e: unknown) => e);
    expect(ToolError.isInstance(err)).toBe(true);
    expect((err as ToolError).message).toBe(
      "charge: outcome unknown: this may already have taken effect. Check the state before continuing.",
    );
  });

  it("fails the step and throws ToolError with cause when the body throws", async () => {
    const t = new ToolTestContext();
    const err = (await t.run(() => new Billing().broken()).catch((e: unknown) => e)) as ToolError;
    expect(ToolError.isInstance(err)).toBe(true);
    expect(err.message).toBe("broken: card declined");
    expect((err.cause as Error).message).toBe("card declined");
    expect(t.failed).toEqual([
      { stepId: t.submitted[0]?.stepId, target: "broken", error: { message: "card declined" } },
    ]);
  });

  it("validates input before submitting", async () => {
    const t = new ToolTestContext();
    const err = (await t
      .run(() => new Billing().charge({ cents: -1 }))
      .catch((e: unknown) => e)) as ValidationError;
    expect(ValidationError.isInstance(err)).toBe(true);
    expect(err.issues[0]?.path).toEqual(["cents"]);
    expect(t.submitted).toHaveLength(0);
  });

  it("rejects non-JSON args with a TypeError naming the path, before submitting", async () => {
    const t = new ToolTestContext();
    const err = await t.run(() => new Billing().echo({ items: [1, Number.NaN] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/^args\.items\[1\]/);
    expect(t.submitted).toHaveLength(0);
  });

  it("fails the step (not leaving it executing) when the result is not strict JSON", async () => {
    const t = new ToolTestContext();
    const err = (await t.run(() => new Billing().badResult()).catch((e: unknown) => e)) as ToolError;
    expect(ToolError.isInstance(err)).toBe(true);
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(/^badResult: result\.when/);
    expect(t.failed).toHaveLength(1);
    expect(t.completed).toHaveLength(0);
  });

  it("blocks: throws Blocked and remembers it on the context", async () => {
    const t = new ToolTestContext().block("charge", "appr-1");
    const err = (await t.run(() => new Billing().charge({ cents: 1 })).catch((e: unknown) => e)) as Blocked;
    expect(Blocked.isInstance(err)).toBe(true);
    expect(err.approvalId).toBe("appr-1");
    expect(t.context.suspension).toBe(err);
    // A framework that swallowed it cannot continue: the next call throws at once, unsent.
    await expect(t.run(() => new Billing().echo({}))).rejects.toBe(err);
    expect(t.submitted).toHaveLength(1);
  });

  it("maps rate limits and terminal decisions", async () => {
    const t = new ToolTestContext().script("echo", { kind: "rate_limit" }, { kind: "terminate" });
    const box = new Billing();
    const limited = await t.run(() => box.echo({})).catch((e: unknown) => e);
    expect(RateLimited.isInstance(limited)).toBe(true);
    expect((limited as RateLimited).reason).toBe("rate_limit_exceeded");
    const terminal = await t.run(() => box.echo({})).catch((e: unknown) => e);
    expect(Terminated.isInstance(terminal)).toBe(true);
    expect(t.context.suspension).toBe(terminal);
  });

  it("gives parallel identical calls distinct steps", async () => {
    const t = new ToolTestContext();
    const box = new Billing();
    await t.run(() => Promise.all([box.echo({ q: 1 }), box.echo({ q: 1 }), box.echo({ q: 1 })]));
    expect(new Set(t.submitted.map((s) => s.stepId)).size).toBe(3);
  });

  it("binds decorated methods per instance, so detached calls keep this", async () => {
    const t = new ToolTestContext();
    const box = new Billing();
    const { charge } = box;
    expect(charge.name).toBe("charge");
    await t.run(() => charge({ cents: 3 }));
    expect(box.charges).toEqual([3]);
  });

  it("runs nested calls as their own steps", async () => {
    const t = new ToolTestContext();
    expect(await t.run(() => new Billing().nested())).toEqual({ inner: true });
    expect(t.submitted.map((s) => s.target)).toEqual(["nested", "echo"]);
  });
});

describe("wrapTool", () => {
  it("records transformed args and the mapped result", async () => {
    const calls: unknown[] = [];
    // #region wrap-tool
    const weather = wrapTool({
      name: "weather",
      invoke: (args: { city: string; unit?: string | null }) => {
        calls.push(args);
        return { summary: `sunny in ${args.city}`, raw: 1 };
      },
      transformArgs: (args) => ({ city: args.city.toLowerCase() }),
      toResult: (raw) => raw.summary,
    });
    // #endregion
    const t = new ToolTestContext();
    expect(await t.run(() => weather({ city: "Oslo", unit: null }))).toBe("sunny in oslo");
    expect(calls).toEqual([{ city: "oslo" }]);
    expect(t.submitted[0]?.args).toEqual({ city: "oslo" });
    expect(t.completed[0]?.result).toBe("sunny in oslo");
  });

  it("shallow-copies args by default", async () => {
    const seen: object[] = [];
    const w = wrapTool({
      name: "w",
      invoke: (a: { x: number }) => {
        seen.push(a);
        return a.x;
      },
    });
    const args = { x: 1 };
    await withToolContext(() => w(args));
    expect(seen[0]).toEqual(args);
    expect(seen[0]).not.toBe(args);
  });
});

describe("step()", () => {
  it("records a local step and replays its value", async () => {
    const t = new ToolTestContext();
    const value = await t.run(() => step("pick", ({ n }) => n * 2, { n: 21 }));
    expect(value).toBe(42);
    expect(t.submitted[0]).toMatchObject({ kind: "local", target: "pick", args: { n: 21 } });
    t.replay("now", "2020-01-01");
    expect(await t.run(() => step("now", () => "fresh"))).toBe("2020-01-01");
    expect(t.submitted[1]?.args).toEqual({});
  });

  it("throws PolicyError when denied and remembers the denial (G12)", async () => {
    const t = new ToolTestContext().deny("risky", "no risk today");
    const err = await t.run(() => step("risky", () => 1)).catch((e: unknown) => e);
    expect(PolicyError.isInstance(err)).toBe(true);
    expect(t.context.denial).toBe(err);
    t.context.clearDenial();
    expect(t.context.denial).toBeUndefined();
  });

  it("throws the documented error outside an execution", async () => {
    await expect(step("x", () => 1)).rejects.toThrow("rebuno step('x') called outside an active execution.");
    expect(() => execution()).toThrow("execution() accessed without an active execution context");
  });
});

describe("subagent() with the scripted kernel", () => {
  class Research extends Toolbox {
    @tool({ input: z.object({ topic: z.string(), session: z.string().optional() }) })
    async research(args: { topic: string; session?: string }) {
      return subagent(
        "researcher",
        { topic: args.topic },
        {
          client: clientRef.current,
          ...(args.session === undefined ? {} : { session: args.session }),
        },
      );
    }
    @tool({ input: z.object({ id: z.string() }) })
    async lookup(args: { id: string }) {
      await new Promise((r) => setTimeout(r, 20));
      return `found ${args.id}`;
    }
  }
  const clientRef: { current: ToolTestContext["client"] | undefined } = { current: undefined };

  it("refuses outside a tool body", async () => {
    const t = new ToolTestContext();
    await expect(t.run(() => subagent("x", {}, { client: t.client }))).rejects.toThrow(
      "subagent('x') called outside a tool body.",
    );
  });

  it("suspends once when every call waits, after siblings finished", async () => {
    const t = new ToolTestContext();
    clientRef.current = t.client;
    const box = new Research();
    const results = await t.run(() =>
      Promise.allSettled([
        box.research({ topic: "a" }),
        box.research({ topic: "b" }),
        box.lookup({ id: "1" }),
      ]),
    );
    expect(results[2]).toEqual({ status: "fulfilled", value: "found 1" });
    expect(results[0]?.status).toBe("rejected");
    expect(Blocked.isInstance((results[0] as PromiseRejectedResult).reason)).toBe(true);
    expect(t.suspendCalls).toBe(1);
    expect(t.children.map((c) => c.idempotencyKey)).toEqual(
      t.submitted.filter((s) => s.target === "research").map((s) => `exec-test:${s.stepId}`),
    );
    expect(t.children[0]?.spawnedBy).toEqual({ executionId: "exec-test", stepId: t.submitted[0]?.stepId });
    // Waiting calls leave their steps executing: nothing completed or failed for them.
    expect(t.failed).toHaveLength(0);
    expect(t.completed.map((c) => c.target)).toEqual(["lookup"]);
  });

  it("returns the settled child's output when suspend answers false, and ToolError for a failed child", async () => {
    const t = new ToolTestContext();
    clientRef.current = t.client;
    t.childOutcome("researcher", { output: { summary: "ok" } });
    expect(await t.run(() => new Research().research({ topic: "a" }))).toEqual({ summary: "ok" });
    const t2 = new ToolTestContext();
    clientRef.current = t2.client;
    t2.childOutcome("researcher", { failureReason: "agent_error: boom" });
    const err = await t2.run(() => new Research().research({ topic: "a" })).catch((e: unknown) => e);
    expect(ToolError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({
      message: "research: subagent child-1 failed: agent_error: boom",
      reason: "subagent_failed",
      childExecutionId: "child-1",
      childError: "agent_error: boom",
    });
  });

  it("counts a call whose nested step waits on a subagent as waiting (no hang)", async () => {
    class Outer extends Toolbox {
      @tool async outer() {
        return step("inner", () => subagent("helper", {}, { client: clientRef.current }));
      }
    }
    const t = new ToolTestContext();
    clientRef.current = t.client;
    const err = await t.run(() => new Outer().outer()).catch((e: unknown) => e);
    expect(Blocked.isInstance(err)).toBe(true);
    expect(t.suspendCalls).toBe(1);
    expect(t.children[0]?.spawnedBy?.stepId).toBe(t.submitted[1]?.stepId);
  });

  it("retries transient suspend failures, and stops quietly (no step failure) on persistent ones", async () => {
    const t = new ToolTestContext();
    clientRef.current = t.client;
    t.port.suspendFailures.push(new NetworkError("reset"), new NetworkError("reset"));
    const err = await t.run(() => new Research().research({ topic: "a" })).catch((e: unknown) => e);
    expect(Blocked.isInstance(err)).toBe(true);
    expect((err as Blocked).reason).toBe("awaiting_steps");
    expect(t.suspendCalls).toBe(3);

    const t2 = new ToolTestContext();
    clientRef.current = t2.client;
    t2.port.suspendFailures.push(new ValidationError("bad lease headers"));
    const err2 = await t2.run(() => new Research().research({ topic: "a" })).catch((e: unknown) => e);
    expect(Blocked.isInstance(err2)).toBe(true);
    expect((err2 as Blocked).reason).toBe("suspend_failed");
    expect(t2.failed).toHaveLength(0);
  });

  it("refuses a child session equal to the parent's before any request", async () => {
    const t = new ToolTestContext({ session: "s1" });
    clientRef.current = t.client;
    const err = await t
      .run(() => new Research().research({ topic: "a", session: "s1" }))
      .catch((e: unknown) => e);
    expect(ToolError.isInstance(err)).toBe(true);
    expect(ValidationError.isInstance((err as ToolError).cause)).toBe(true);
    expect(t.children).toHaveLength(0);
  });
});
