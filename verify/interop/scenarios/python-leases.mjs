// Leases: an at_most_once tool whose agent process is SIGKILLed mid-body is redelivered and the
// official SDK raises the indeterminate ToolError; a tool longer than the lease survives on heartbeats.
import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { allEvents, plain, waitFor, waitForPort, waitForStatus } from "../lib/harness.mjs";

const INDETERMINATE =
  "outcome unknown: this may already have taken effect. Check the state before continuing.";
const RETRY_REFUSED = "prior attempt outcome unknown; retry refused";

export default [
  {
    name: "python at_most_once + crash: SIGKILL mid-tool, redelivery → indeterminate ToolError, retry denied",
    agents: [{ id: "py-crash", kind: "crash", leaseTimeoutSeconds: 10 }],
    timeoutMs: 180_000,
    async run(w) {
      const marker = path.join(w.dir, "charge-started");
      rmSync(marker, { force: true });
      await w.startAgent("py-crash", { INTEROP_MARKER: marker });
      const created = await w.client.create("py-crash", { amount: 42 });
      await waitFor(() => existsSync(marker), { timeoutMs: 20_000, what: "charge_card body to start" });
      const first = w.agent("py-crash").proc;
      assert.equal(Number(readFileSync(marker, "utf8").trim()), first.pid);
      // A standby process imports the SDK now and binds the same port once the first one is dead, so
      // a loaded machine's slow Python start-up does not stretch the outage.
      const go = path.join(w.dir, "standby-go");
      rmSync(go, { force: true });
      const standby = w.spawnAgent("py-crash", { INTEROP_MARKER: marker, INTEROP_WAIT_FOR: go });
      await waitFor(() => existsSync(`${go}.ready`), {
        timeoutMs: 60_000,
        what: "the standby agent to finish importing",
      });
      const killedAt = Date.now();
      assert.equal(first.kill("SIGKILL"), true);
      await once(first, "exit");
      rmSync(marker, { force: true });
      writeFileSync(go, "go\n");
      // Same port, fresh process: nothing of the first attempt survives in memory.
      await waitForPort(w.agent("py-crash").port, { proc: standby, timeoutMs: 30_000 });

      const ex = await waitForStatus(w.client, created.id, "completed", { timeoutMs: 60_000 });
      const redeliveredAfterMs = Date.now() - killedAt;
      const out = plain(ex.output);
      assert.equal(existsSync(marker), false, "the at_most_once body must not run again");
      assert.deepEqual(out.first_error?.str, `charge_card: ${INDETERMINATE}`);
      assert.equal(out.first_error.tool_id, "charge_card");
      assert.equal(out.retry, `charge_card not allowed. reason: [policy_denied] ${RETRY_REFUSED} (HTTP 403)`);
      assert.equal(out.refund, "refunded 42");
      assert.deepEqual(out.calls, { refund_card: 1 }, "second process ran only refund_card");
      // Normally attempt 2; on a loaded machine a delivery may hit the port before the standby binds.
      assert.ok(
        out.lease.attempt >= 2 && out.lease.attempt <= 4,
        `redelivered as attempt ${out.lease.attempt}`,
      );

      const steps = await w.client.listSteps(ex.id);
      const charges = steps
        .filter((s) => s.target === "charge_card")
        .sort((a, b) => a.occurrence - b.occurrence);
      assert.equal(charges.length, 2);
      assert.equal(charges[0].status, "failed");
      assert.equal(charges[0].idempotency, "at_most_once");
      assert.deepEqual(plain(charges[0].error), { message: INDETERMINATE, reason: "indeterminate" });
      assert.equal(charges[0].stepId, out.first_error.step_id);
      assert.equal(charges[1].status, "denied");
      assert.deepEqual(plain(charges[1].error), { reason: RETRY_REFUSED, rule_id: "__indeterminate_retry" });

      const events = await allEvents(w.client, ex.id);
      const acked = events.filter((e) => e.type === "dispatch.acked");
      assert.deepEqual(
        acked.map((e) => e.payload.attempt),
        [1, out.lease.attempt],
      );
      const failedDeliveries = events
        .filter((e) => e.type === "dispatch.failed")
        .map((e) => e.payload.attempt);
      assert.deepEqual(
        failedDeliveries,
        Array.from({ length: out.lease.attempt - 2 }, (_, i) => i + 2),
        "only deliveries to the dead port may fail",
      );
      assert.equal(
        acked[0].payload.dispatch_id,
        acked[1].payload.dispatch_id,
        "reclaim keeps the dispatch id",
      );
      assert.equal(acked[1].payload.dispatch_id, out.lease.dispatch_id);
      const chargeEvents = events.filter((e) => e.payload?.step_id === charges[0].stepId).map((e) => e.type);
      assert.deepEqual(chargeEvents, ["step.proposed", "step.allowed", "step.executing", "step.failed"]);
      // The last renewal (heartbeat every 10/3 s) was at most ~3.4 s before the kill.
      assert.ok(
        redeliveredAfterMs >= 6_000,
        `redelivered after ${redeliveredAfterMs} ms: the 10 s lease cannot have expired yet`,
      );
    },
  },
  {
    name: "python heartbeats: a 14 s tool under a 10 s lease keeps attempt 1",
    agents: [{ id: "py-slow", kind: "slow", leaseTimeoutSeconds: 10 }],
    timeoutMs: 120_000,
    async run(w) {
      await w.startAgent("py-slow");
      const started = Date.now();
      const created = await w.client.create("py-slow", { seconds: 14 });
      const ex = await waitForStatus(w.client, created.id, "completed", { timeoutMs: 45_000 });
      const elapsed = Date.now() - started;
      const out = plain(ex.output);
      assert.ok(elapsed >= 14_000, `completed after ${elapsed} ms`);
      assert.ok(out.job.slept >= 14, `slept ${out.job.slept}`);
      assert.deepEqual(out.calls, { slow_job: 1 }, "the tool body ran once");
      assert.equal(out.lease.attempt, 1);
      const events = await allEvents(w.client, ex.id);
      const deliveries = events.filter((e) => e.type.startsWith("dispatch."));
      assert.deepEqual(
        deliveries.map((e) => [e.type, e.payload.attempt]),
        [
          ["dispatch.queued", 0],
          ["dispatch.acked", 1],
        ],
        "no reclaim/redelivery while heartbeats renew the lease",
      );
      const steps = await w.client.listSteps(ex.id);
      assert.equal(steps.length, 1);
      assert.equal(steps[0].status, "succeeded");
      // httpx2 logs every kernel call at INFO: the SDK heartbeated every 10/3 s and each was a 204.
      const log = w.agentLog("py-slow");
      const beats = [
        ...log.matchAll(/HTTP Request: POST \S+\/v0\/executions\/([0-9a-f-]+)\/heartbeat "HTTP\/1\.1 (\d+)/g),
      ];
      assert.ok(beats.length >= 3, `only ${beats.length} heartbeats logged`);
      for (const b of beats) {
        assert.equal(b[1], ex.id);
        assert.equal(b[2], "204", "heartbeat answered 204");
      }
      assert.doesNotMatch(log, /lease superseded|dispatch heartbeat failed/i);
    },
  },
  {
    name: "python lease expiry on a live process: starved heartbeats → reclaim → attempt 2 supersedes attempt 1",
    agents: [{ id: "py-starve", kind: "starve", leaseTimeoutSeconds: 10 }],
    timeoutMs: 150_000,
    async run(w) {
      const marker = path.join(w.dir, "starved");
      rmSync(marker, { force: true });
      await w.startAgent("py-starve", { INTEROP_MARKER: marker });
      // The first body blocks the agent's event loop for 16 s: no heartbeat renews the 10 s lease, the
      // kernel reclaims it and redelivers attempt 2 of the same dispatch to the same (then frozen)
      // process; when the loop wakes, the SDK supersedes attempt 1, whose late writes must be refused.
      const created = await w.client.create("py-starve", { seconds: 16 });
      const ex = await waitForStatus(w.client, created.id, "completed", { timeoutMs: 60_000 });
      const out = plain(ex.output);
      assert.deepEqual(out.result, { blocked: false }, "only attempt 2's result may be recorded");
      assert.equal(out.lease.attempt, 2);
      assert.deepEqual(out.calls, { starve_once: 2 }, "safe_to_retry body re-ran on attempt 2");
      const steps = await w.client.listSteps(ex.id);
      assert.equal(steps.length, 1);
      assert.equal(steps[0].status, "succeeded");
      assert.deepEqual(plain(steps[0].result), { blocked: false });
      const events = await allEvents(w.client, ex.id);
      const acked = events.filter((e) => e.type === "dispatch.acked");
      assert.deepEqual(
        acked.map((e) => e.payload.attempt),
        [1, 2],
      );
      assert.equal(acked[0].payload.dispatch_id, acked[1].payload.dispatch_id);
      assert.equal(events.filter((e) => e.type === "step.succeeded").length, 1);
      // Any write attempt 1 managed to send after waking was fenced with 409.
      const log = w.agentLog("py-starve");
      const late = [
        ...log.matchAll(/HTTP Request: POST \S+\/steps\/[0-9a-f]{64}\/complete "HTTP\/1\.1 (\d+)/g),
      ].map((m) => m[1]);
      assert.ok(late.includes("200"), `attempt 2 completed its step (${late.join(",")})`);
      assert.ok(
        late.every((code) => code === "200" || code === "409"),
        `complete answers: ${late.join(",")}`,
      );
    },
  },
];
