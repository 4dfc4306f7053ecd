/**
 * The waterfall's derivation (app/waterfall/derive.ts) on event logs recorded from a real dev
 * kernel and real agents: the tour's crash-and-redeliver case (SIGKILL mid-tool, lease expiry,
 * redelivery), an approval granted by a person, a policy denial, and a subagent call.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, type ServeHandle, Toolbox, ToolError, tool } from "@rebuno/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quantilesByTool } from "../app/metrics/durations.js";
import { byLabel, parseMetrics, scalar } from "../app/metrics/parse.js";
import { lineDiff } from "../app/policy/diff.js";
import { deriveWaterfall, type Waterfall } from "../app/waterfall/derive.js";
import { forkPlan } from "../app/waterfall/fork-plan.js";
import { FAST_LEASE, runCrashAndRedeliver } from "./crash-scenario.js";

const SECRET = randomBytes(16).toString("hex");
const POLICY = `default_action: allow
rules:
  - id: refunds-need-a-person
    when: { target: refund }
    then: { decision: require_approval }
  - id: never-delete
    when: { target: delete_account }
    then: { decision: deny, reason: "closed by the support team" }
`;
const ORDER = { type: "object", properties: { order: { type: "string" } }, required: ["order"] } as const;

class Desk extends Toolbox {
  @tool("lookup", { input: ORDER })
  async lookup(args: { order: string }) {
    return { order: args.order };
  }
  @tool("refund", { input: ORDER, idempotency: "at_most_once" })
  async refund(args: { order: string }) {
    return { refunded: args.order };
  }
  @tool("delete_account", { input: ORDER })
  async deleteAccount(args: { order: string }) {
    return { deleted: args.order };
  }
}

let kernel: DevKernel;
let url: string;
let client: Client;
let server: ServeHandle;
const children: ChildProcess[] = [];
/** The crash case's execution, for the later tests that read its log again. */
let crashedId = "";

beforeAll(async () => {
  kernel = await startDevKernel({ dispatch: FAST_LEASE, onError: () => {} });
  url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  client = new Client({ baseUrl: url });
  const desk = new Desk();
  const agent = new Agent<{ ask: string; order: string }, unknown>(
    "desk",
    async (input) => {
      await desk.lookup({ order: input.order });
      if (input.ask === "refund") return desk.refund({ order: input.order });
      try {
        return await desk.deleteAccount({ order: input.order });
      } catch (error) {
        if (ToolError.isInstance(error)) return { refused: error.message };
        throw error;
      }
    },
    { secret: SECRET, baseUrl: url, logger: { warn: () => {}, error: () => {} } },
  );
  server = await agent.serve({ host: "127.0.0.1", port: 0 });
  kernel.registerAgent({ id: "desk", webhookUrl: server.url, secret: SECRET, policy: POLICY });
}, 60_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await server?.close();
  await client?.close();
  await kernel?.close();
});

async function waterfallOf(id: string): Promise<Waterfall> {
  const [events, steps] = await Promise.all([client.events(id), client.listSteps(id)]);
  return deriveWaterfall(events, steps, Date.now());
}

const row = (w: Waterfall, target: string) => {
  const r = w.steps.find((s) => s.target === target);
  if (r === undefined) throw new Error(`no ${target} row in ${w.steps.map((s) => s.target).join(", ")}`);
  return r;
};

describe("deriveWaterfall on recorded kernel logs", () => {
  it("crash and redeliver: two attempts, the first ended by the lease; print_label ran twice; charge_card indeterminate; find_charge after", async () => {
    const run = await runCrashAndRedeliver(kernel, url, client, SECRET);
    children.push(...run.children);
    expect(run.execution.status).toBe("completed");
    crashedId = run.execution.id;
    const w = await waterfallOf(run.execution.id);

    expect(w.attempts.map((a) => [a.attempt, a.end.kind])).toEqual([
      [1, "lease_expired"],
      [2, "completed"],
    ]);
    expect(w.attempts[0]!.dispatchId).toBe(w.attempts[1]!.dispatchId);

    const label = row(w, "print_label");
    expect(label.outcome).toBe("succeeded");
    expect(label.bodies.map((b) => [b.ordinal, b.cutShort, b.inferred])).toEqual([
      [1, true, false],
      [2, false, true],
    ]);

    const charge = row(w, "charge_card");
    expect(charge.outcome).toBe("indeterminate");
    expect(charge.bodies.map((b) => [b.ordinal, b.cutShort])).toEqual([[1, true]]);

    const find = row(w, "find_charge");
    expect(find.outcome).toBe("succeeded");
    expect(find.proposedMs).toBeGreaterThanOrEqual(charge.settledMs!);
    expect(find.bodies.map((b) => b.ordinal)).toEqual([2]);
    expect(w.steps.map((s) => s.target).indexOf("find_charge")).toBe(2);
  });

  it("approval granted: the first delivery suspends for the approval; the resume replays the lookup", async () => {
    const e = await client.create("desk", { ask: "refund", order: "o-1" });
    let pending = await client.listApprovals({ status: "pending" });
    for await (const event of client.followEvents(e.id, { pollMs: 20 })) {
      if (event.type === "approval.requested") break;
    }
    pending = (await client.listApprovals({ status: "pending" })).filter((a) => a.executionId === e.id);
    await client.grantApproval(pending[0]!.id, { decidedBy: "ana", rationale: "customer called" });
    expect((await client.waitForTerminal(e.id)).status).toBe("completed");
    const w = await waterfallOf(e.id);

    expect(w.attempts.map((a) => a.end)).toEqual([
      { kind: "suspended", waitingFor: "approval" },
      { kind: "completed" },
    ]);
    const refund = row(w, "refund");
    expect(refund.outcome).toBe("succeeded");
    expect(refund.approval).toMatchObject({
      status: "granted",
      decidedBy: "ana",
      rationale: "customer called",
    });
    expect(refund.approval!.decidedMs!).toBeGreaterThanOrEqual(refund.approval!.requestedMs);
    expect(refund.bodies.map((b) => b.ordinal)).toEqual([2]);
    expect(row(w, "lookup").replayedIn).toEqual([2]);
  });

  it("policy denial: rule and reason on the row, no body", async () => {
    const e = await client.create("desk", { ask: "close", order: "o-2" });
    expect((await client.waitForTerminal(e.id)).status).toBe("completed");
    const w = await waterfallOf(e.id);
    const denied = row(w, "delete_account");
    expect(denied.outcome).toBe("denied");
    expect(denied.denial).toEqual({ ruleId: "never-delete", reason: "closed by the support team" });
    expect(denied.bodies).toEqual([]);
    expect(w.attempts.map((a) => a.end.kind)).toEqual(["completed"]);
  });

  it("a delivery the agent refused is listed with its cause", async () => {
    kernel.registerAgent({ id: "wrong-secret", webhookUrl: server.url, secret: "not-the-secret" });
    const e = await client.create("wrong-secret", {});
    for await (const event of client.followEvents(e.id, { pollMs: 20 })) {
      if (event.type === "dispatch.failed") break;
    }
    const w = await waterfallOf(e.id);
    expect(w.deliveryFailures[0]).toMatchObject({ attempt: 1, cause: "HTTP 401" });
    expect(w.attempts).toEqual([]);
    await client.cancel(e.id);
  });
});

describe("the other pure helpers of the console, on the same kernel", () => {
  it("forkPlan: steps settled at or before the event replay, the rest run live", async () => {
    const events = await client.events(crashedId);
    const chargeSettled = events.find((e) => e.type === "step.failed" && e.payload.target === "charge_card")!;
    const plan = forkPlan(events, chargeSettled.eventSeq);
    expect(plan.map((p) => [p.target, p.mode])).toEqual([
      [
        "print_label",
        events.findIndex((e) => e.type === "step.succeeded" && e.payload.target === "print_label") <
        events.indexOf(chargeSettled)
          ? "replay"
          : "live",
      ],
      ["charge_card", "replay"],
      ["find_charge", "live"],
    ]);
    expect(forkPlan(events, 0).every((p) => p.mode === "live")).toBe(true);
    const last = events[events.length - 1]!.eventSeq;
    expect(forkPlan(events, last).every((p) => p.mode === "replay")).toBe(true);
  });

  it("parseMetrics reads the kernel's /metrics: executions, decisions, delivery failures by cause", async () => {
    const samples = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    expect(scalar(samples, "rebuno_executions_created_total")).toBeGreaterThanOrEqual(4);
    expect(
      byLabel(samples, "rebuno_executions_finished_total", "status").get("completed"),
    ).toBeGreaterThanOrEqual(3);
    expect(byLabel(samples, "rebuno_step_decisions_total", "decision").get("denied")).toBeGreaterThanOrEqual(
      1,
    );
    expect(
      byLabel(samples, "rebuno_dispatch_failures_total", "cause").get("http_401"),
    ).toBeGreaterThanOrEqual(1);
    expect(scalar(samples, "rebuno_dispatch_reclaimed_total")).toBeGreaterThanOrEqual(1);
    expect(parseMetrics('x_total{a="q\\"uote"} 3\n# HELP y\nnot a sample\n')).toEqual([
      { name: "x_total", labels: { a: 'q"uote' }, value: 3 },
    ]);
  });

  it("quantilesByTool: p50/p99 of the recorded steps' durations, per tool", async () => {
    const steps = await client.listSteps(crashedId);
    const q = quantilesByTool(steps);
    // started_at → completed_at as recorded: charge_card's ends at its indeterminate failure.
    expect(q.map((x) => x.target)).toEqual(["charge_card", "find_charge", "print_label"]);
    for (const x of q) {
      expect(x.count).toBe(1);
      expect(x.p99).toBeGreaterThanOrEqual(x.p50);
    }
  });

  it("lineDiff marks added and removed lines, keeps the rest", () => {
    expect(lineDiff("a\nb\nc", "a\nB\nc\nd")).toEqual([
      { op: "same", text: "a" },
      { op: "remove", text: "b" },
      { op: "add", text: "B" },
      { op: "same", text: "c" },
      { op: "add", text: "d" },
    ]);
    expect(lineDiff("", "")).toEqual([{ op: "same", text: "" }]);
  });
});
