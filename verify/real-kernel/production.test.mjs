// The production path: PostgreSQL, two `rebuno server` replicas behind a round-robin proxy, an
// agent process built with @rebuno/sdk (REBUNO_PROTOCOL=legacy), 200 executions with tool calls in
// both idempotency modes, a denial and an approval. One replica is SIGKILLed mid-run and restarted.
// Then the same workload on our dev kernel, for the throughput comparison.
//
// The snapshot's dispatcher claims at most 10 executions per replica every 2 s
// (internal/lifecycle/lifecycle.go:73,88): ~5 executions/s per replica, so 200 take ~20 s on two.

import { Client } from "@rebuno/client";
import { startDevKernel } from "@rebuno/dev-kernel";
import { freePort } from "@rebuno/test-kit";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startGoServer, startPostgres } from "../../scripts/real-kernel.mjs";
import { startAgentProcess } from "./lib/agent-process.mjs";
import { startRoundRobinProxy } from "./lib/proxy.mjs";

const EXECUTIONS = 200;
const PAIRS = 2; // each execution: PAIRS × (lookup safe_to_retry + charge at_most_once)
const LEASE_S = 10;
const TOKEN = "prod-bearer-token";
const SECRET = "prod-agent-secret-0123456789";
const POLICY = `default_action: allow
rules:
  - id: deny-wire
    priority: 10
    when: { target: wire_money }
    then: { decision: deny, reason: "wires need a human" }
  - id: approve-refund
    priority: 20
    when: { target: refund }
    then: { decision: require_approval }
`;

const cleanups = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** Create the workload, drive the approval, wait for every execution; returns figures. */
async function runWorkload({ client, agent, duringRun }) {
  const started = Date.now();
  const ids = [];
  for (let i = 0; i < EXECUTIONS; i++)
    ids.push((await client.create("prod-agent", { kind: "work", key: `e${i}`, n: PAIRS })).id);
  const denyId = (await client.create("prod-agent", { kind: "deny", key: "d" })).id;
  const approvalId = (await client.create("prod-agent", { kind: "approval", key: "a" })).id;

  const all = [...ids, denyId, approvalId];
  const done = new Map();
  const deadline = Date.now() + 240_000;
  let granted = false;
  let hookRan = false;
  while (done.size < all.length && Date.now() < deadline) {
    for (const id of all) {
      if (done.has(id)) continue;
      const e = await client.get(id).catch(() => undefined); // a replica may be down: poll again
      if (!e) continue;
      if (["completed", "failed", "cancelled"].includes(e.status)) done.set(id, e);
      if (id === approvalId && e.status === "blocked" && !granted) {
        const a = (await client.listApprovals()).find((x) => x.executionId === approvalId);
        if (a) {
          await client.grantApproval(a.id, { decidedBy: "ops" });
          granted = true;
        }
      }
    }
    if (!hookRan && duringRun && done.size >= EXECUTIONS / 4) {
      hookRan = true;
      await duringRun();
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (Date.now() - started) / 1000;
  const stepsPerExecution = 2 * PAIRS;
  const figures = {
    seconds,
    executionsPerSecond: all.length / seconds,
    stepsPerSecond: (EXECUTIONS * stepsPerExecution + 2) / seconds,
  };
  return { ids, denyId, approvalId, done, figures, agent };
}

/** Every acknowledged step is in the audit trail; no at_most_once body ran twice. */
async function audit(client, run) {
  const problems = [];
  let redispatched = 0;
  const bodies = run.agent.bodies();
  const charges = new Map();
  for (const b of bodies.filter((x) => x.tool === "charge")) {
    const k = `${b.executionId}/${b.key}`;
    charges.set(k, (charges.get(k) ?? 0) + 1);
  }
  const duplicates = [...charges.entries()].filter(([, n]) => n > 1);
  for (const id of run.ids) {
    const e = run.done.get(id);
    if (e?.status !== "completed") {
      problems.push(`${id}: ${e?.status ?? "not terminal"} ${e?.failureReason ?? ""}`);
      continue;
    }
    const steps = await client.listSteps(id);
    const events = await client.events(id, { limit: 1000 });
    if (events.filter((x) => x.type === "dispatch.acked").length > 1) redispatched++;
    const succeededEvents = new Set(
      events.filter((x) => x.type === "step.succeeded").map((x) => x.payload.step_id),
    );
    // The output is what the agent's acknowledged steps returned: each must be a recorded,
    // succeeded step with a step.succeeded event.
    for (let i = 0; i < PAIRS; i++) {
      for (const target of ["lookup", "charge"]) {
        const s = steps.find((x) => x.target === target && x.args?.key === `${keyOf(id, run)}-${i}`);
        if (s?.status !== "succeeded" || !succeededEvents.has(s.stepId))
          problems.push(`${id}: ${target} #${i} missing from the audit trail (${s?.status ?? "no step"})`);
      }
    }
  }
  return { problems, duplicates, redispatched };
}

const keyOf = (id, run) => `e${run.ids.indexOf(id)}`;

/** PostgreSQL + two replicas + proxy + agent; one replica is SIGKILLed and restarted mid-run. */
async function runOnGoServers() {
  const pg = await startPostgres();
  cleanups.push(pg.stop);
  const agentPort = await freePort();
  const manifest = [
    {
      id: "prod-agent",
      webhookUrl: `http://127.0.0.1:${agentPort}/webhook`,
      secret: SECRET,
      policy: POLICY,
    },
  ];
  const env = { REBUNO_DISPATCH_LEASE_TIMEOUT: `${LEASE_S}s`, REBUNO_DB_MAX_CONNS: "30" };
  // One after the other: each replica runs the migrations at boot.
  const replicas = [];
  for (let i = 0; i < 2; i++) {
    const r = await startGoServer({ dbUrl: pg.url, token: TOKEN, agents: manifest, env });
    replicas.push(r);
  }
  cleanups.push(() => Promise.all(replicas.map((r) => r.stop())));
  const proxy = await startRoundRobinProxy(replicas.map((r) => ({ port: r.port })));
  cleanups.push(proxy.close);
  const agent = await startAgentProcess({
    REBUNO_URL: proxy.url,
    REBUNO_AGENT_SECRET: SECRET,
    REBUNO_PROTOCOL: "legacy",
    AGENT_ID: "prod-agent",
    PORT: String(agentPort),
    LEASE_S: String(LEASE_S),
  });
  cleanups.push(agent.kill);
  const client = new Client({ baseUrl: proxy.url, apiKey: TOKEN, protocol: "legacy", env: {} });
  let restarted = false;
  const run = await runWorkload({
    client,
    agent,
    async duringRun() {
      // SIGKILL replica 2 mid-run, then restart it on the same port (the proxy skips it meanwhile).
      const victim = replicas[1];
      await victim.kill();
      await new Promise((r) => setTimeout(r, 3000));
      replicas[1] = await startGoServer({
        dbUrl: pg.url,
        token: TOKEN,
        agents: manifest,
        env,
        port: victim.port,
      });
      restarted = true;
    },
  });
  return { run, restarted, ...(await audit(client, run)) };
}

/** The same workload on our dev kernel (one process, in memory), for comparison. */
async function runOnDevKernel() {
  const agentPort = await freePort();
  const kernel = await startDevKernel({
    agents: [
      {
        id: "prod-agent",
        webhookUrl: `http://127.0.0.1:${agentPort}/webhook`,
        secret: SECRET,
        policy: POLICY,
      },
    ],
    bootstrapToken: TOKEN,
    devMode: false,
    onError: () => {},
  });
  const url = await kernel.listen();
  cleanups.push(() => kernel.close());
  const agent = await startAgentProcess({
    REBUNO_URL: url,
    REBUNO_AGENT_SECRET: SECRET,
    REBUNO_PROTOCOL: "v1",
    AGENT_ID: "prod-agent",
    PORT: String(agentPort),
  });
  cleanups.push(agent.kill);
  const client = new Client({ baseUrl: url, apiKey: TOKEN, env: {} });
  const run = await runWorkload({ client, agent });
  return { run, ...(await audit(client, run)) };
}

describe("production path: rebuno server × 2 on PostgreSQL behind a proxy", () => {
  let go;
  let dev;

  beforeAll(async () => {
    go = await runOnGoServers();
    dev = await runOnDevKernel();
    const f = (x) =>
      `${x.executionsPerSecond.toFixed(1)} executions/s, ${x.stepsPerSecond.toFixed(1)} steps/s (${x.seconds.toFixed(1)} s)`;
    console.log(
      [
        `production run: ${EXECUTIONS} executions × ${2 * PAIRS} tool steps + 1 denial + 1 approval`,
        `  rebuno server ×2 + PostgreSQL (one replica SIGKILLed and restarted): ${f(go.run.figures)}`,
        `  dev kernel (memory, one process):                               ${f(dev.run.figures)}`,
        `  completed after the kill: ${[...go.run.done.values()].filter((e) => e.status === "completed").length}/${go.run.done.size}; at_most_once duplicates: ${go.duplicates.length}; executions delivered more than once: ${go.redispatched}`,
      ].join("\n"),
    );
  }, 480_000);

  test("the replica was killed and restarted mid-run", () => {
    expect(go.restarted).toBe(true);
  });

  test("every execution completes, the denial and the approval included", () => {
    expect(
      [...go.run.done.values()]
        .filter((e) => e.status !== "completed")
        .map((e) => [e.id, e.status, e.failureReason]),
    ).toEqual([]);
    expect(go.run.done.size).toBe(EXECUTIONS + 2);
    expect(go.run.done.get(go.run.denyId).output).toMatchObject({
      forModel: "wire_money not allowed. reason: wires need a human",
    });
    expect(go.run.done.get(go.run.approvalId).output).toEqual({ refund: "refunded a" });
  });

  test("no at_most_once body ran twice", () => {
    expect(go.duplicates).toEqual([]);
  });

  test("every acknowledged step is in the audit trail (steps and step.succeeded events)", () => {
    expect(go.problems).toEqual([]);
  });

  test("the dev kernel runs the same workload to the same end", () => {
    expect(dev.problems).toEqual([]);
    expect(dev.duplicates).toEqual([]);
    expect(dev.run.done.size).toBe(EXECUTIONS + 2);
  });
});
