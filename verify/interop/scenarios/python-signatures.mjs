// v1 request signatures and dispatch-lease headers, probed from inside a live dispatch with the
// official SDK's own signer (KernelClient._sign) and KernelClient calls (verify/interop/python/agents.py
// probe_process). Each probe reports how the kernel answered and how the SDK surfaced it.
import assert from "node:assert/strict";
import { allEvents, plain, waitForStatus } from "../lib/harness.mjs";

const unauthorized = { ok: false, cls: "UnauthorizedError", status: 401, code: "unauthorized" };
const superseded = { ok: false, cls: "LeaseSuperseded", status: 409, code: "lease_superseded" };

export default [
  {
    name: "python signatures: v1 signing, ±300 s window, tampering, lease headers, ownership",
    agents: [
      { id: "py-probe", kind: "probe" },
      // Never started: exists only so its (valid) signature can touch py-probe's execution.
      { id: "py-probe-other", kind: "probe" },
    ],
    timeoutMs: 90_000,
    async run(w) {
      const other = w.agent("py-probe-other");
      w.agent("py-probe").env = { PROBE_OTHER_ID: other.id, PROBE_OTHER_SECRET: other.secret };
      await w.startAgent("py-probe");
      const created = await w.client.create("py-probe", { note: "héllo" });
      const ex = await waitForStatus(w.client, created.id, "completed");
      const out = plain(ex.output);
      const probes = [
        // [probe, expected report, what it checks]
        ["get_ok", { ok: true, value: "set" }, "signed GET of own execution"],
        [
          "heartbeat_ok",
          { ok: true, value: null },
          "heartbeat with the live lease, empty body + Content-Type json → 204",
        ],
        ["query_signed", { status: 200, code: null }, "signature covers path + ?query"],
        ["wrong_secret", unauthorized, "wrong secret → 401"],
        ["unknown_agent", unauthorized, "unknown agent id → 401"],
        [
          "other_agent",
          { ok: false, cls: "ForbiddenError", status: 403, code: "forbidden" },
          "another agent's execution → 403",
        ],
        ["ts_past_400", { status: 401, code: "unauthorized" }, "timestamp now-400 s → 401"],
        ["ts_future_400", { status: 401, code: "unauthorized" }, "timestamp now+400 s → 401"],
        ["ts_past_200", { status: 200, code: null }, "timestamp now-200 s inside the window → 200"],
        ["tampered_body", { status: 401, code: "unauthorized" }, "body changed after signing → 401"],
        ["sha256_scheme", { status: 401, code: "unauthorized" }, "old sha256= agent scheme → 401"],
        ["submit_no_lease", { status: 400, code: "validation_error" }, "submit without lease headers → 400"],
        ["submit_attempt_zero", { status: 400, code: "validation_error" }, "attempt 0 → 400"],
        ["submit_attempt_text", { status: 400, code: "validation_error" }, "attempt not an integer → 400"],
        ["heartbeat_next_attempt", superseded, "heartbeat with attempt+1 → 409 lease_superseded"],
        ["heartbeat_other_dispatch", superseded, "heartbeat with a foreign dispatch id → 409"],
        ["submit_next_attempt", superseded, "submit with attempt+1 → 409"],
        ["complete_exec_next_attempt", superseded, "complete execution with attempt+1 → 409"],
        ["submit_ok", { decision: "proceed", step_id_len: 64 }, "submit with the live lease → proceed"],
        ["complete_step_next_attempt", superseded, "complete step with attempt+1 → 409, step unchanged"],
        ["complete_step_ok", { ok: true, value: null }, "complete step with the live lease → 200"],
        [
          "complete_step_again",
          { ok: true, value: null },
          "complete of a terminal step → 200 (replay), unchanged",
        ],
        [
          "fail_step_after_complete",
          { ok: true, value: null },
          "fail of a terminal step → 200 (replay), unchanged",
        ],
        [
          "get_step_done",
          { status: "succeeded", result: "probed", target: "probe_target" },
          "first outcome wins",
        ],
        ["get_step_missing", { ok: true, value: null }, "unknown step → 404 not_found → get_step() None"],
        ["previous_none", { ok: true, value: null }, "previous of a session-less execution → {state: null}"],
      ];
      const failures = [];
      for (const [name, want, what] of probes) {
        try {
          assert.deepEqual(out[name], want);
        } catch {
          failures.push(
            `${name} (${what}): expected ${JSON.stringify(want)}, got ${JSON.stringify(out[name])}`,
          );
        }
      }
      assert.deepEqual(failures, [], `probes that differ:\n  ${failures.join("\n  ")}`);
      assert.equal(out.note, "héllo");
      assert.equal(out.lease.attempt, 1);

      // Only the one accepted submission left a step; refused ones (tampered, lease-less, stale) none.
      const steps = await w.client.listSteps(ex.id);
      assert.deepEqual(
        steps.map((s) => [s.target, s.status, plain(s.args), plain(s.result), s.occurrence]),
        [["probe_target", "succeeded", { n: 1 }, "probed", 0]],
      );
      const events = await allEvents(w.client, ex.id);
      const acked = events.filter((e) => e.type === "dispatch.acked");
      assert.equal(acked.length, 1, "exactly one delivery");
      assert.equal(acked[0].payload.dispatch_id, out.lease.dispatch_id);
      assert.equal(acked[0].payload.attempt, 1);
      assert.equal(events.at(-1).type, "execution.completed");
    },
  },
];
