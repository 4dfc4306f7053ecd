// The SDK's scenarios against the real Go kernel (`rebuno dev`), from the public API only: an agent
// process built with @rebuno/sdk (fixtures/agent.ts, REBUNO_PROTOCOL=legacy) and @rebuno/client.
import { createServer } from "node:http";
import { Client } from "@rebuno/client";
import { freePort } from "@rebuno/test-kit";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startGoDev } from "../../scripts/real-kernel.mjs";
import { startAgentProcess } from "./lib/agent-process.mjs";

const LEASE_S = 4;
const SECRET = "sdk-agent-secret-0123456789";
const POLICY = `default_action: allow
rules:
  - id: deny-wire
    priority: 10
    when: { target: wire_money }
    then: { decision: deny, reason: "wires need a human" }
  - id: approve-refund
    priority: 20
    when: { target: refund }
    then: { decision: require_approval, approval_config: { approvers: [ops] } }
`;

let go;
let llm;
let llmCalls = 0;
let agentProc;
let client;
const ports = {};
const others = [];

function agentEnv(id, port, extra = {}) {
  return {
    REBUNO_URL: go.url,
    REBUNO_AGENT_SECRET: SECRET,
    REBUNO_PROTOCOL: "legacy",
    AGENT_ID: id,
    PORT: String(port),
    LEASE_S: String(LEASE_S),
    LLM_URL: llm.url,
    ...extra,
  };
}

beforeAll(async () => {
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      llmCalls++;
      const { prompt } = JSON.parse(text);
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ text: `echo ${prompt}` }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  llm = { server, url: `http://127.0.0.1:${server.address().port}` };
  ports.main = await freePort();
  ports.crash = await freePort();
  ports.wrong = await freePort();
  const hook = (p) => `http://127.0.0.1:${p}/webhook`;
  go = await startGoDev({
    agents: [
      { id: "sdk-agent", webhookUrl: hook(ports.main), secret: SECRET, policy: POLICY },
      { id: "sdk-crash", webhookUrl: hook(ports.crash), secret: SECRET, policy: POLICY },
      { id: "sdk-wrong", webhookUrl: hook(ports.wrong), secret: SECRET, policy: POLICY },
    ],
    env: { REBUNO_DISPATCH_LEASE_TIMEOUT: `${LEASE_S}s` },
  });
  agentProc = await startAgentProcess(agentEnv("sdk-agent", ports.main));
  client = new Client({ baseUrl: go.url, protocol: "legacy", env: {} });
});

afterAll(async () => {
  await Promise.allSettled([agentProc?.kill(), ...others.map((p) => p.kill())]);
  await go?.stop();
  await new Promise((r) => (llm ? llm.server.close(r) : r()));
});

async function runToEnd(input, agentId = "sdk-agent") {
  const created = await client.create(agentId, input);
  const done = await client.waitForTerminal(created.id, { timeoutMs: 60_000, pollMs: 200 });
  const steps = await client.listSteps(created.id);
  return { done, steps, bodies: (p = agentProc) => p.bodies().filter((b) => b.executionId === created.id) };
}

async function waitStatus(id, status, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const e = await client.get(id);
    if (e.status === status) return e;
    if (Date.now() > deadline) throw new Error(`${id} still ${e.status}, wanted ${status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("SDK agent (protocol legacy) on rebuno dev", () => {
  test("tools in both idempotency modes run once each and are recorded", async () => {
    const { done, steps, bodies } = await runToEnd({ kind: "tools", key: "t1" });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ safe: { found: "value-t1" }, once: { receipt: "r-t1" } });
    expect(steps.map((s) => [s.target, s.idempotency, s.status]).sort()).toEqual([
      ["charge", "at_most_once", "succeeded"],
      ["lookup", "safe_to_retry", "succeeded"],
    ]);
    expect(
      bodies()
        .map((b) => b.tool)
        .sort(),
    ).toEqual(["charge", "lookup"]);
  });

  test("a denial is the documented string for the model and a ToolError for code; the body never runs", async () => {
    const { done, bodies } = await runToEnd({ kind: "deny", key: "d1" });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({
      forModel: "wire_money not allowed. reason: wires need a human",
      direct: { reason: "denied", policyReason: "wires need a human" },
    });
    expect(bodies()).toEqual([]);
  });

  test("an approval blocks the execution; after the grant the body runs once", async () => {
    const created = await client.create("sdk-agent", { kind: "approval", key: "a1" });
    await waitStatus(created.id, "blocked");
    const approval = (await client.listApprovals()).find((a) => a.executionId === created.id);
    expect(approval).toBeDefined();
    await client.grantApproval(approval.id, { decidedBy: "ops", rationale: "fine" });
    const done = await client.waitForTerminal(created.id, { timeoutMs: 60_000, pollMs: 200 });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ refund: "refunded a1" });
    expect(agentProc.bodies().filter((b) => b.executionId === created.id).length).toBe(1);
  });

  test("a denied approval reaches the code as a ToolError (denied); the body never runs", async () => {
    const created = await client.create("sdk-agent", { kind: "approval-denied", key: "a2" });
    await waitStatus(created.id, "blocked");
    const approval = (await client.listApprovals()).find((a) => a.executionId === created.id);
    await client.denyApproval(approval.id, { decidedBy: "ops", rationale: "too much" });
    const done = await client.waitForTerminal(created.id, { timeoutMs: 60_000, pollMs: 200 });
    expect(done.status).toBe("completed");
    expect(done.output).toMatchObject({ reason: "denied" });
    expect(agentProc.bodies().filter((b) => b.executionId === created.id)).toEqual([]);
  });

  test("step() records local steps (one per call, in order)", async () => {
    const { done, steps } = await runToEnd({ kind: "step" });
    expect(done.status).toBe("completed");
    expect(done.output.distinct).toBe(true);
    expect(steps.map((s) => [s.kind, s.target, s.occurrence, s.status]).sort()).toEqual([
      ["local", "draw", 0, "succeeded"],
      ["local", "draw", 1, "succeeded"],
    ]);
  });

  test("rebunoFetch makes a durable llm_call step; the provider is called once", async () => {
    const before = llmCalls;
    const { done, steps } = await runToEnd({ kind: "llm", key: "hello" });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ status: 200, body: { text: "echo hello" } });
    expect(steps.map((s) => [s.kind, s.status])).toEqual([["llm_call", "succeeded"]]);
    expect(llmCalls - before).toBe(1);
  });

  test("after an agent crash the redelivery replays recorded work; the in-flight at_most_once call is indeterminate", async () => {
    const first = await startAgentProcess(agentEnv("sdk-crash", ports.crash, { HANG: "1" }));
    others.push(first);
    const created = await client.create("sdk-crash", { kind: "crash", key: "c1" });
    await first.waitFor("BODY charge_hang");
    await first.kill();
    const second = await startAgentProcess(agentEnv("sdk-crash", ports.crash));
    others.push(second);
    const done = await client.waitForTerminal(created.id, { timeoutMs: 60_000, pollMs: 200 });
    expect(done.status).toBe("completed");
    expect(done.output).toMatchObject({
      charged: false,
      reason: "indeterminate",
      safe: { found: "value-c1" },
    });
    const mine = (p) =>
      p
        .bodies()
        .filter((b) => b.executionId === created.id)
        .map((b) => b.tool);
    expect(mine(first)).toEqual(["lookup", "charge_hang"]);
    // The replacement replays lookup and step() and never runs the at_most_once body again.
    expect(mine(second)).toEqual([]);
    const steps = await client.listSteps(created.id);
    const hang = steps.find((s) => s.target === "charge_hang" && s.occurrence === 0);
    expect(hang?.status).toBe("failed");
    expect(hang?.error).toMatchObject({ reason: "indeterminate" });
  });

  test("features this kernel lacks fail with NotSupportedByKernel naming them", async () => {
    const { done } = await runToEnd({ kind: "unsupported" });
    expect(done.status).toBe("completed");
    // Called inside step() (where subagent() must run), the error reaches the code as the step's
    // ToolError with the NotSupportedByKernel as its cause.
    const typed = (v) => (v.name === "NotSupportedByKernel" ? v : v.cause);
    expect(typed(done.output.previous)).toEqual({ name: "NotSupportedByKernel", feature: "sessions" });
    expect(typed(done.output.subagent)).toEqual({ name: "NotSupportedByKernel", feature: "subagents" });
    expect(typed(done.output.resource)).toEqual({ name: "NotSupportedByKernel", feature: "resources" });
  });

  test("with the wrong setting (v1) the agent refuses the first webhook, naming REBUNO_PROTOCOL", async () => {
    const wrong = await startAgentProcess(
      agentEnv("sdk-wrong", ports.wrong, { REBUNO_PROTOCOL: "v1", WARN: "1" }),
    );
    others.push(wrong);
    const created = await client.create("sdk-wrong", { kind: "tools", key: "w1" });
    const deadline = Date.now() + 30_000;
    let events = [];
    while (!events.some((e) => e.type === "dispatch.failed") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      events = await client.events(created.id);
    }
    expect(events.map((e) => e.type)).toContain("dispatch.failed");
    expect(wrong.stderr()).toMatch(/REBUNO_PROTOCOL/);
    expect(wrong.bodies()).toEqual([]);
    await client.cancel(created.id);
  });
});
