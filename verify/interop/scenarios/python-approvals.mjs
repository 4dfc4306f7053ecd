// require_approval with the official Python SDK: the execution blocks, our Client grants it (an
// approver mismatch is refused first), the re-dispatched handler replays earlier steps and runs the
// gated tool; a second approval is denied through the official Python Client exactly as it sends it
// (`{"rationale": ""}`, no decided_by) and the tool returns the SDK's refusal string.
import assert from "node:assert/strict";
import { allEvents, eventTypes, inOrder, plain, waitFor, waitForStatus } from "../lib/harness.mjs";

const POLICY = `default_action: allow
rules:
  - id: finance-wire
    priority: 10
    when:
      target: wire_money
      arguments:
        to: { equals: acme }
    then:
      decision: require_approval
      reason: wires are reviewed
      approval_config: { approvers: [finance], timeout: 10m, message: wire needs finance }
  - id: any-wire
    priority: 20
    when: { target: wire_money }
    then:
      decision: require_approval
      approval_config: { timeout: 10m }
`;

async function pendingApprovalFor(client, executionId) {
  return waitFor(
    async () => {
      const list = await client.listApprovals();
      return list.find((a) => a.executionId === executionId && a.status === "pending");
    },
    { timeoutMs: 15_000, what: `a pending approval of ${executionId}` },
  );
}

export default [
  {
    name: "python approvals: blocked → grant via our Client → resume; deny via official Python Client",
    agents: [{ id: "py-approval", kind: "approval", policy: POLICY }],
    timeoutMs: 120_000,
    async run(w, { protocol }) {
      await w.startAgent("py-approval");

      // --- grant path
      const a = await w.client.create("py-approval", { amount: 500, to: "acme" });
      const blocked = await waitForStatus(w.client, a.id, "blocked");
      assert.equal(blocked.status, "blocked");
      const approval = await pendingApprovalFor(w.client, a.id);
      assert.deepEqual(approval.approvers, ["finance"]);
      assert.equal(approval.message, "wire needs finance");
      const stepsBefore = await w.client.listSteps(a.id);
      const gated = stepsBefore.find((s) => s.target === "wire_money");
      assert.equal(gated.status, "awaiting_approval");
      assert.equal(approval.stepId, gated.stepId);

      await assert.rejects(
        w.client.grantApproval(approval.id, { decidedBy: "mallory" }),
        (err) => err instanceof protocol.ForbiddenError && err.status === 403 && err.code === "forbidden",
        "a decider outside approvers must get 403 forbidden",
      );
      assert.equal(
        (await w.client.getApproval(approval.id)).status,
        "pending",
        "a refused decision leaves no trace",
      );
      await w.client.grantApproval(approval.id, { decidedBy: "finance", rationale: "looks fine" });
      const done = await waitForStatus(w.client, a.id, "completed");
      const out = plain(done.output);
      assert.deepEqual(out.wire, { wired: 500, to: "acme" });
      assert.equal(out.balance, 1200);
      assert.deepEqual(
        out.calls,
        { read_balance: 1, wire_money: 1 },
        "read_balance replayed on the second dispatch",
      );
      const granted = await w.client.getApproval(approval.id);
      assert.equal(granted.status, "granted");
      assert.equal(granted.decidedBy, "finance");

      const evA = await allEvents(w.client, a.id);
      const typesA = eventTypes(evA);
      assert.ok(
        inOrder(typesA, [
          "step.proposed",
          "step.awaiting_approval",
          "approval.requested",
          "execution.blocked",
          "approval.granted",
          "step.allowed",
          "execution.resumed",
          "dispatch.queued",
          "dispatch.acked",
          "step.executing",
          "step.succeeded",
          "execution.completed",
        ]),
        typesA.join(","),
      );
      const queued = evA.filter((e) => e.type === "dispatch.queued").map((e) => e.payload.dispatch_id);
      assert.equal(queued.length, 2, "one dispatch per run");
      assert.notEqual(queued[0], queued[1]);
      assert.equal(out.lease.dispatch_id, queued[1]);
      assert.equal(out.lease.attempt, 1);
      assert.equal(evA.find((e) => e.type === "approval.granted").payload.decided_by, "finance");

      // --- deny path through the official Python client
      const b = await w.client.create("py-approval", { amount: 7, to: "bob" });
      await waitForStatus(w.client, b.id, "blocked");
      const approvalB = await pendingApprovalFor(w.client, b.id);
      await w.pyClient(["deny", approvalB.id]);
      const doneB = await waitForStatus(w.client, b.id, "completed");
      const outB = plain(doneB.output);
      assert.equal(outB.wire, "wire_money not allowed. reason: [policy_denied] approval_denied (HTTP 403)");
      assert.deepEqual(outB.calls, { read_balance: 1 });
      const wireB = (await w.client.listSteps(b.id)).find((s) => s.target === "wire_money");
      assert.equal(wireB.status, "denied");
      assert.deepEqual(plain(wireB.error), { reason: "approval_denied" });
      assert.equal((await w.client.getApproval(approvalB.id)).status, "denied");

      const py = await w.pyClient(["inspect", a.id, b.id]);
      assert.equal(py[a.id].approvals[0].status, "granted");
      assert.equal(py[b.id].approvals[0].status, "denied");
      assert.ok(
        !py._pending_approvals.includes(approval.id) && !py._pending_approvals.includes(approvalB.id),
      );
    },
  },
];
