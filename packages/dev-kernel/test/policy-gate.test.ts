// The kernel's use of policy (docs/protocol.md §6.3, §9): denials, rate limits (refuse and park), token
// budgets, judge rules, and the policy admin routes.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { argsHashFromText, computeStepId } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { DEFAULT_AGENTS, Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

const BUNDLE = `default_action: deny
rules:
  - id: no-force
    when: { target: git_push, arguments: { force: { equals: "true" } } }
    then: { decision: deny, reason: force pushes are not allowed }
  - id: quiet-deny
    when: { target: rm }
    then: { decision: deny }
  - id: limited
    when: { target: search }
    then:
      decision: allow
      rate_limit: { max_calls: 1, window: 1m }
  - id: parked
    when: { target: crawl }
    then:
      decision: allow
      rate_limit: { max_calls: 1, window: 1m, max_wait: 2m }
  - id: models
    when: { step_kind: llm_call }
    then:
      decision: allow
      budget: { max_tokens: 100, on_exceed: deny }
  - id: ok
    when: { targets: [git_push, read*] }
    then: { decision: allow }
`;

const agents = [{ ...DEFAULT_AGENTS[0]!, policy: BUNDLE }, DEFAULT_AGENTS[1]!];

describe.each(stores)("policy gate ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("denials carry the rule's reason, or policy_denied, and replay identically", async () => {
    h = await Harness.start(store, { agents, dispatch: { leaseTimeoutSeconds: 10 } });
    const { id, lease } = await h.started();
    const force = await h.submit(id, lease, { kind: "tool_call", target: "git_push", args: { force: true } });
    expect(force.body).toEqual({
      decision: "denied",
      step_id: expect.any(String),
      reason: "force pushes are not allowed",
      rule_id: "no-force",
    });
    const quiet = await h.submit(id, lease, { kind: "tool_call", target: "rm", args: {} });
    expect(quiet.body).toMatchObject({ decision: "denied", reason: "policy_denied", rule_id: "quiet-deny" });
    const dflt = await h.submit(id, lease, { kind: "tool_call", target: "unknown", args: {} });
    expect(dflt.body).toMatchObject({
      decision: "denied",
      reason: "no explicit allow rule matched",
      rule_id: "default",
    });
    const local = await h.submit(id, lease, { kind: "local", target: "now" });
    expect(local.body.decision).toBe("proceed");
    const allowed = (await h.events(id)).filter((e) => e.type === "step.allowed").at(-1);
    expect(allowed.payload.rule_id).toBe("local");
    const denied = (await h.events(id)).find((e) => e.type === "step.denied");
    expect(denied.payload).toEqual({
      step_id: force.body.step_id,
      step_type: "tool_call",
      target: "git_push",
      rule_id: "no-force",
      error: { reason: "force pushes are not allowed", rule_id: "no-force" },
      policy_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // Redelivery: the denial replays with the same reason and rule id, without re-evaluation.
    h.advance(10_001);
    await h.kernel.tick();
    const l2 = leaseOf(await h.webhook(id, 2));
    const replay = await h.submit(id, l2, { kind: "tool_call", target: "git_push", args: { force: true } });
    expect(replay.body).toEqual(force.body);
    const quietReplay = await h.submit(id, l2, { kind: "tool_call", target: "rm", args: {} });
    expect(quietReplay.body).toEqual(quiet.body);
  });

  test("rate limited: refused, nothing recorded, the id is not consumed", async () => {
    h = await Harness.start(store, { agents });
    const { id, lease } = await h.started();
    const call = { kind: "tool_call", target: "search", args: { q: 1 } };
    const first = await h.submit(id, lease, call);
    expect(first.body.decision).toBe("proceed");
    const second = await h.submit(id, lease, call);
    expect(second.body).toEqual({ decision: "rate_limited", reason: "rate_limit_exceeded" });
    const ev = (await h.events(id)).at(-1);
    expect(ev.type).toBe("step.rate_limited");
    expect(ev.payload).toMatchObject({ rule_id: "limited", reason: "rate_limit_exceeded", target: "search" });
    expect((await h.client("GET", `/v0/executions/${id}/steps`)).body).toHaveLength(1);
    h.advance(60_000);
    const third = await h.submit(id, lease, call);
    expect(third.body.step_id).toBe(computeStepId(id, "tool_call", "search", argsHashFromText('{"q":1}'), 1));
  });

  test("a rate-limit park blocks the dispatch once, then refuses", async () => {
    h = await Harness.start(store, { agents });
    const { id, lease } = await h.started();
    const call = { kind: "tool_call", target: "crawl", args: {} };
    expect((await h.submit(id, lease, call)).body.decision).toBe("proceed");
    const park = await h.submit(id, lease, call);
    expect(park.body).toEqual({ decision: "blocked", reason: "rate_limit_exceeded" });
    expect((await h.execution(id)).status).toBe("running");
    expect((await h.submit(id, lease, call)).body.code).toBe("lease_superseded");
    await h.kernel.tick();
    expect(h.webhooksFor(id)).toHaveLength(1);
    h.advance(60_000);
    await h.kernel.tick();
    const w = await h.nextWebhook(id, 1);
    const l2 = leaseOf(w);
    // The unfinished first call re-runs (no token taken), the refilled token admits the second,
    // and the third is refused: this execution already parked once.
    expect((await h.submit(id, l2, call)).body.decision).toBe("proceed");
    expect((await h.submit(id, l2, call)).body.decision).toBe("proceed");
    expect((await h.submit(id, l2, call)).body).toEqual({
      decision: "rate_limited",
      reason: "rate_limit_exceeded",
    });
  });

  test("a token budget denies once spent ≥ max_tokens", async () => {
    h = await Harness.start(store, { agents });
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "llm_call", target: "m", args: { n: 1 } });
    expect(s.body.decision).toBe("proceed");
    await h.complete(id, lease, s.body.step_id, {
      status: 200,
      headers: { "content-type": "application/json" },
      body: '{"usage":{"input_tokens":60,"output_tokens":40}}',
    });
    const over = await h.submit(id, lease, { kind: "llm_call", target: "m", args: { n: 2 } });
    expect(over.body).toMatchObject({
      decision: "denied",
      reason: "execution_token_budget_exceeded",
      rule_id: "models",
    });
  });

  test("set policy: 204, 400 for an invalid bundle, 404 for an unknown agent; registration keeps it", async () => {
    h = await Harness.start(store);
    const bad = await h.client("POST", "/v0/policies/alpha", { bundle: "rules: [ {id: x} ]" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^invalid policy bundle: /);
    expect((await h.client("POST", "/v0/policies/ghost", { bundle: "default_action: allow\n" })).status).toBe(
      404,
    );
    const ok = await h.client("POST", "/v0/policies/alpha", { bundle: "default_action: deny\nrules: []\n" });
    expect(ok.status).toBe(204);
    const re = await h.client("POST", "/v0/agents", {
      id: "alpha",
      webhook_url: "http://agents.test/alpha",
      secret: "alpha-secret",
    });
    expect(re.status).toBe(201);
    expect(re.body.policy_bundle).toBe("default_action: deny\nrules: []\n");
    const { id, lease } = await h.started();
    expect((await h.submit(id, lease, { kind: "tool_call", target: "x" })).body.decision).toBe("denied");
  });

  test("policy test endpoint evaluates cases and counts mismatches", async () => {
    h = await Harness.start(store, { agents });
    const r = await h.client("POST", "/v0/policies/alpha/test", {
      cases: [
        { name: "push", target: "git_push", args: { force: true }, expect: "deny", expect_rule: "no-force" },
        { name: "read", target: "read_file", args: {}, expect: "deny" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.mismatches).toBe(1);
    expect(r.body.results[0]).toMatchObject({
      name: "push",
      decision: "deny",
      rule_id: "no-force",
      matched: true,
    });
    expect(r.body.results[1]).toMatchObject({
      name: "read",
      decision: "allow",
      rule_id: "ok",
      matched: false,
    });
  });

  test("judge rules ask the configured endpoint before recording", async () => {
    const asked: unknown[] = [];
    const judge = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const q = JSON.parse(body) as { arguments: { amount: number } };
        asked.push(q);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ decision: q.arguments.amount > 100 ? "deny" : "allow", score: 0.9 }));
      });
    });
    await new Promise<void>((r) => judge.listen(0, "127.0.0.1", r));
    const endpoint = `http://127.0.0.1:${(judge.address() as AddressInfo).port}/judge`;
    try {
      const bundle = `rules:
  - id: judged
    when: { target: pay }
    then:
      decision: judge
      reason: the judge said no
      judge: { instructions: small payments only, fallback: deny }
`;
      h = await Harness.start(store, {
        judgeEndpoint: endpoint,
        agents: [{ ...DEFAULT_AGENTS[0]!, policy: bundle }],
      });
      const { id, lease } = await h.started();
      const small = await h.submit(id, lease, { kind: "tool_call", target: "pay", args: { amount: 5 } });
      expect(small.body.decision).toBe("proceed");
      const big = await h.submit(id, lease, { kind: "tool_call", target: "pay", args: { amount: 500 } });
      expect(big.body).toMatchObject({ decision: "denied", rule_id: "judged" });
      expect(asked).toEqual([
        { agent_id: "alpha", tool: "pay", arguments: { amount: 5 }, instructions: "small payments only" },
        { agent_id: "alpha", tool: "pay", arguments: { amount: 500 }, instructions: "small payments only" },
      ]);
    } finally {
      await new Promise<void>((r) => judge.close(() => r()));
    }
  });
});
