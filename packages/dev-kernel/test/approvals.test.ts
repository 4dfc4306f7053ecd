// Approvals (docs/protocol.md §11, §4.15): require_approval blocks; grant / deny / expiry resume;
// approvers check; conflicts on decided approvals; cancel expires pending approvals.
import { afterEach, describe, expect, test } from "vitest";
import { DEFAULT_AGENTS, Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

const BUNDLE = `default_action: allow
rules:
  - id: refunds
    when: { target: refund }
    then:
      decision: require_approval
      reason: refunds are reviewed
      approval_config: { approvers: ["alice", "bob"], timeout: 10m, message: check the amount }
  - id: anyone
    when: { target: deploy }
    then: { decision: require_approval }
`;

const agents = [{ ...DEFAULT_AGENTS[0]!, policy: BUNDLE }, DEFAULT_AGENTS[1]!];

describe.each(stores)("approvals ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  async function blocked(target = "refund") {
    const { id, lease } = await h.started();
    const r = await h.submit(id, lease, { kind: "tool_call", target, args: { amount: 10 } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      decision: "blocked",
      step_id: expect.any(String),
      approval_id: expect.any(String),
    });
    return { id, lease, stepId: r.body.step_id as string, approvalId: r.body.approval_id as string };
  }

  test("require_approval blocks the execution and lists the approval", async () => {
    h = await Harness.start(store, { agents });
    const b = await blocked();
    expect((await h.execution(b.id)).status).toBe("blocked");
    expect((await h.eventTypes(b.id)).slice(-4)).toEqual([
      "step.proposed",
      "step.awaiting_approval",
      "approval.requested",
      "execution.blocked",
    ]);
    const awaiting = (await h.events(b.id)).find((e) => e.type === "step.awaiting_approval");
    expect(awaiting.payload).toMatchObject({
      rule_id: "refunds",
      policy_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const list = await h.client("GET", "/v0/approvals");
    expect(list.body).toEqual([
      {
        id: b.approvalId,
        step_id: b.stepId,
        execution_id: b.id,
        status: "pending",
        approvers: ["alice", "bob"],
        message: "check the amount",
        timeout_at: "2026-07-07T12:10:00Z",
        created_at: "2026-07-07T12:00:00Z",
      },
    ]);
    const one = await h.client("GET", `/v0/approvals/${b.approvalId}`);
    expect(one.body.id).toBe(b.approvalId);
    // The blocked dispatch was retired: the old handler's writes are superseded.
    const more = await h.submit(b.id, b.lease, { kind: "local", target: "x" });
    expect(more.body.code).toBe("lease_superseded");
    // Complete on the awaiting step is a conflict (lease still current).
    const c = await h.complete(b.id, b.lease, b.stepId, 1);
    expect(c.status).toBe(409);
    expect(c.body.code).toBe("conflict");
  });

  test("grant: step allowed, execution resumed and redelivered; the re-submission proceeds", async () => {
    h = await Harness.start(store, { agents });
    const b = await blocked();
    const g = await h.client("POST", `/v0/approvals/${b.approvalId}/grant`, {
      decided_by: "alice",
      rationale: "ok",
    });
    expect(g.status).toBe(204);
    // The redelivery may already be acknowledged (delivery races this read).
    expect((await h.eventTypes(b.id)).filter((t) => t !== "dispatch.acked").slice(-4)).toEqual([
      "approval.granted",
      "step.allowed",
      "execution.resumed",
      "dispatch.queued",
    ]);
    const w = await h.nextWebhook(b.id, 1);
    expect(w.dispatch_id).not.toBe(b.lease.dispatchId);
    const r = await h.submit(b.id, leaseOf(w), { kind: "tool_call", target: "refund", args: { amount: 10 } });
    expect(r.body).toEqual({ decision: "proceed", step_id: b.stepId });
    const approval = await h.client("GET", `/v0/approvals/${b.approvalId}`);
    expect(approval.body).toMatchObject({ status: "granted", decided_by: "alice", rationale: "ok" });
    const again = await h.client("POST", `/v0/approvals/${b.approvalId}/deny`, { decided_by: "alice" });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("conflict");
  });

  test("deny: step denied with the rationale (or approval_denied) and replayed as denied", async () => {
    h = await Harness.start(store, { agents });
    const b = await blocked();
    expect((await h.client("POST", `/v0/approvals/${b.approvalId}/deny`, { decided_by: "bob" })).status).toBe(
      204,
    );
    // The redelivery may already be acknowledged (delivery races this read).
    expect((await h.eventTypes(b.id)).filter((t) => t !== "dispatch.acked").slice(-4)).toEqual([
      "approval.denied",
      "step.denied",
      "execution.resumed",
      "dispatch.queued",
    ]);
    const w = await h.nextWebhook(b.id, 1);
    const r = await h.submit(b.id, leaseOf(w), { kind: "tool_call", target: "refund", args: { amount: 10 } });
    expect(r.body).toEqual({ decision: "denied", step_id: b.stepId, reason: "approval_denied" });
  });

  test("a decider outside approvers is 403 and nothing is recorded", async () => {
    h = await Harness.start(store, { agents });
    const b = await blocked();
    const r = await h.client("POST", `/v0/approvals/${b.approvalId}/grant`, { decided_by: "carol" });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      code: "forbidden",
      message: 'forbidden: "carol" is not an approver for this approval',
    });
    const a = await h.client("GET", `/v0/approvals/${b.approvalId}`);
    expect(a.body.status).toBe("pending");
    expect(a.body).not.toHaveProperty("decided_by");
    expect((await h.eventTypes(b.id)).at(-1)).toBe("execution.blocked");
  });

  test("an approval with no approvers can be decided by anyone; unknown approval → 404", async () => {
    h = await Harness.start(store, { agents });
    const b = await blocked("deploy");
    const a = await h.client("GET", `/v0/approvals/${b.approvalId}`);
    expect(a.body).not.toHaveProperty("approvers");
    expect(a.body.timeout_at).toBe("2026-07-07T12:15:00Z");
    expect(
      (await h.client("POST", `/v0/approvals/${b.approvalId}/grant`, { decided_by: "zed" })).status,
    ).toBe(204);
    const missing = await h.client("POST", "/v0/approvals/01920000-0000-7000-8000-000000000009/grant", {
      decided_by: "zed",
    });
    expect(missing.status).toBe(404);
  });

  test("expiry: approval expired, step denied with approval_timeout, execution resumed", async () => {
    h = await Harness.start(store, { agents });
    const b = await blocked();
    h.advance(10 * 60_000);
    await h.kernel.tick();
    const a = await h.client("GET", `/v0/approvals/${b.approvalId}`);
    expect(a.body).toMatchObject({ status: "expired", rationale: "timeout" });
    expect((await h.eventTypes(b.id)).filter((t) => t !== "dispatch.acked").slice(-4)).toEqual([
      "approval.expired",
      "step.denied",
      "execution.resumed",
      "dispatch.queued",
    ]);
    const w = await h.nextWebhook(b.id, 1);
    const r = await h.submit(b.id, leaseOf(w), { kind: "tool_call", target: "refund", args: { amount: 10 } });
    expect(r.body).toMatchObject({ decision: "denied", reason: "approval_timeout" });
    const listed = await h.client("GET", "/v0/approvals?status=expired");
    expect(listed.body).toHaveLength(1);
    expect((await h.client("GET", "/v0/approvals")).body).toEqual([]);
  });

  test("cancel expires the pending approval and denies its step", async () => {
    h = await Harness.start(store, { agents });
    const b = await blocked();
    expect((await h.client("POST", `/v0/executions/${b.id}/cancel`)).status).toBe(204);
    const a = await h.client("GET", `/v0/approvals/${b.approvalId}`);
    expect(a.body).toMatchObject({ status: "expired", rationale: "execution_cancelled" });
    const s = await h.client("GET", `/v0/executions/${b.id}/steps/${b.stepId}`);
    expect(s.body).toMatchObject({ status: "denied", error: { reason: "execution_cancelled" } });
    expect((await h.eventTypes(b.id)).slice(-3)).toEqual([
      "execution.cancelled",
      "approval.expired",
      "step.denied",
    ]);
  });
});
