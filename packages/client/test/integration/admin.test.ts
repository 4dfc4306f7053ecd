// The client's admin surface against the real dev kernel, in process and over loopback:
// approvals (grant/deny, approvers check), agents, policies, and scoped API keys with the
// 401/403 rules of docs/protocol.md §1.11.
import type { AgentTransport } from "@rebuno/kernel-transport";
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { Client } from "../../src/index.js";
import { type Env, GATED_BUNDLE, MODES, startEnv } from "./setup.js";

describe.each(MODES)("client ↔ dev kernel: admin (%s)", (mode) => {
  let env: Env;
  let client: Client;
  let gated: AgentTransport;

  beforeEach(async () => {
    env = await startEnv(mode);
    client = env.client();
    gated = env.agent("gated");
  });
  afterEach(async () => {
    await env.close();
  });

  /** An execution of `gated` blocked on a refund approval. */
  async function blockedOnRefund() {
    const e = await client.create("gated", { order: 7 });
    const lease = await env.lease(e.id);
    const d = await gated.submitStep(e.id, lease, {
      kind: "tool_call",
      target: "refund",
      args: { amount: 90 },
    });
    expect(d).toMatchObject({
      decision: "blocked",
      stepId: expect.any(String),
      approvalId: expect.any(String),
    });
    return { id: e.id, stepId: d.stepId!, approvalId: d.approvalId! };
  }

  test("grant: approvers are enforced (403, nothing recorded), then the re-run proceeds", async () => {
    const b = await blockedOnRefund();
    expect((await client.get(b.id)).status).toBe("blocked");
    const pending = await client.listApprovals();
    expect(pending).toEqual([
      expect.objectContaining({
        id: b.approvalId,
        stepId: b.stepId,
        executionId: b.id,
        status: "pending",
        approvers: ["alice"],
        message: "check the amount",
      }),
    ]);
    expect(await client.getApproval(b.approvalId)).toEqual(pending[0]);

    const wrong = client.grantApproval(b.approvalId, { decidedBy: "mallory" });
    await expect(wrong).rejects.toBeInstanceOf(ForbiddenError);
    await expect(wrong).rejects.toMatchObject({ status: 403, code: "forbidden" });
    expect(await client.getApproval(b.approvalId)).toEqual(pending[0]); // no trace of the refusal

    await client.grantApproval(b.approvalId, { decidedBy: "alice", rationale: "fine" });
    expect(await client.getApproval(b.approvalId)).toMatchObject({
      status: "granted",
      decidedBy: "alice",
      rationale: "fine",
      decidedAt: expect.any(String),
    });
    expect(await client.listApprovals()).toEqual([]);
    expect((await client.listApprovals({ status: "granted" })).map((a) => a.id)).toEqual([b.approvalId]);
    expect((await client.get(b.id)).status).toBe("running");

    // The resumed execution is redelivered; re-submitting the granted call proceeds.
    const lease = await env.lease(b.id, 1);
    const again = await gated.submitStep(b.id, lease, {
      kind: "tool_call",
      target: "refund",
      args: { amount: 90 },
    });
    expect(again).toMatchObject({ decision: "proceed", stepId: b.stepId });
    await expect(client.grantApproval(b.approvalId, { decidedBy: "alice" })).rejects.toBeInstanceOf(
      ConflictError,
    );
  });

  test("deny: the step is denied with the rationale and the re-run sees the denial", async () => {
    const b = await blockedOnRefund();
    await client.denyApproval(b.approvalId, { decidedBy: "alice", rationale: "too large" });
    expect(await client.getApproval(b.approvalId)).toMatchObject({ status: "denied", decidedBy: "alice" });
    expect(await client.getStep(b.id, b.stepId)).toMatchObject({
      status: "denied",
      error: { reason: "too large" },
    });

    const lease = await env.lease(b.id, 1);
    const again = await gated.submitStep(b.id, lease, {
      kind: "tool_call",
      target: "refund",
      args: { amount: 90 },
    });
    expect(again).toMatchObject({ decision: "denied", stepId: b.stepId, reason: "too large" });
    await expect(client.denyApproval(b.approvalId, { decidedBy: "alice" })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(
      client.grantApproval("01890000-0000-7000-8000-000000000000", { decidedBy: "alice" }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  test("agents: register (upsert, secret never returned), list sorted, get, delete", async () => {
    const a = await client.registerAgent({
      id: "b-agent",
      webhookUrl: "http://agents.test/b-agent",
      secret: "s3cret",
      leaseTimeoutSeconds: 30,
    });
    expect(a).toMatchObject({
      id: "b-agent",
      webhookUrl: "http://agents.test/b-agent",
      leaseTimeoutSeconds: 30,
    });
    expect(JSON.stringify(a)).not.toContain("s3cret");
    const listed = await client.listAgents();
    expect(listed.map((x) => x.id)).toEqual(["alpha", "b-agent", "gated"]);
    expect(listed.find((x) => x.id === "gated")?.policyBundle).toBe(GATED_BUNDLE);

    const updated = await client.registerAgent({
      id: "b-agent",
      webhookUrl: "http://agents.test/v2",
      secret: "x",
    });
    expect(updated.webhookUrl).toBe("http://agents.test/v2");
    expect(await client.getAgent("b-agent")).toEqual(updated);

    await client.deleteAgent("b-agent");
    await expect(client.getAgent("b-agent")).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      client.registerAgent({ id: "c", webhookUrl: "ftp://nope", secret: "x" }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  test("setPolicy stores a compiled bundle; a bad bundle is a 400 and changes nothing", async () => {
    const bundle =
      "default_action: deny\nrules:\n  - id: reads\n    when: { target: read_* }\n    then: { decision: allow }\n";
    await client.setPolicy("alpha", bundle);
    expect((await client.getAgent("alpha")).policyBundle).toBe(bundle);

    const bad = client.setPolicy("alpha", "rules:\n  - when: { target: x }\n    then: { decision: allow }\n");
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    await expect(bad).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("invalid policy bundle"),
    });
    expect((await client.getAgent("alpha")).policyBundle).toBe(bundle);
    await expect(client.setPolicy("nobody", bundle)).rejects.toBeInstanceOf(NotFoundError);

    // The new bundle governs the next step: default deny.
    const e = await client.create("alpha", null);
    const lease = await env.lease(e.id);
    const d = await env.agent().submitStep(e.id, lease, { kind: "tool_call", target: "write_x", args: {} });
    expect(d).toMatchObject({
      decision: "denied",
      ruleId: "default",
      reason: "no explicit allow rule matched",
    });
  });

  test("testPolicy evaluates cases and past executions without storing anything", async () => {
    const r = await client.testPolicy("gated", {
      cases: [
        { name: "refund", target: "refund", args: { amount: 1 }, expect: "require_approval" },
        { name: "drop", target: "drop_db", expect: "allow" },
        { name: "other", target: "lookup", expect: "allow", expect_rule: "default" },
      ],
    });
    expect(r.mismatches).toBe(1);
    expect(r.results).toEqual([
      expect.objectContaining({
        name: "refund",
        decision: "require_approval",
        rule_id: "refunds",
        matched: true,
      }),
      expect.objectContaining({ name: "drop", decision: "deny", rule_id: "no-prod", matched: false }),
      expect.objectContaining({ name: "other", decision: "allow", rule_id: "default", matched: true }),
    ]);

    // Replaying a past execution against a stricter candidate bundle, which is not stored.
    const b = await blockedOnRefund();
    const strict = "default_action: deny\nrules: []\n";
    const replay = await client.testPolicy("gated", { bundle: strict, executionId: b.id });
    expect(replay.results).toEqual([
      expect.objectContaining({ execution_id: b.id, target: "refund", decision: "deny", matched: false }),
    ]);
    expect((await client.getAgent("gated")).policyBundle).toBe(GATED_BUNDLE);
    await expect(client.testPolicy("gated", { bundle: "not: [valid" })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  test("API keys: scopes gate routes (403), unknown/rotated/revoked tokens are 401", async () => {
    const created = await client.createApiKey({ name: "reader", scopes: ["executions:read"] });
    expect(created).toMatchObject({ name: "reader", scopes: ["executions:read"], revoked: false });
    const token = created.token!;
    expect(token).toEqual(expect.any(String));

    const reader = env.client(token);
    await expect(reader.list()).resolves.toMatchObject({ executions: [] });
    const denied = reader.create("alpha", null);
    await expect(denied).rejects.toBeInstanceOf(ForbiddenError);
    await expect(denied).rejects.toMatchObject({ status: 403, code: "forbidden" });
    await expect(reader.listApiKeys()).rejects.toBeInstanceOf(ForbiddenError);

    // policies:write alone is not enough for /test, which also needs executions:read.
    const policyOnly = await client.createApiKey({ name: "policy", scopes: ["policies:write"] });
    const p = env.client(policyOnly.token!);
    await p.setPolicy("alpha", "default_action: allow\n");
    await expect(p.testPolicy("alpha", { cases: [] })).rejects.toBeInstanceOf(ForbiddenError);

    const keys = await client.listApiKeys();
    expect(keys.map((k) => k.name)).toEqual(["reader", "policy"]);
    expect(keys.every((k) => k.token === undefined)).toBe(true);

    const rotated = await client.rotateApiKey(created.id);
    expect(rotated.id).toBe(created.id);
    expect(rotated.token).not.toBe(token);
    await expect(reader.list()).rejects.toBeInstanceOf(UnauthorizedError);
    const fresh = env.client(rotated.token!);
    await expect(fresh.list()).resolves.toBeDefined();

    await client.revokeApiKey(created.id);
    await client.revokeApiKey(created.id); // repeatable
    const revoked = fresh.list();
    await expect(revoked).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(revoked).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    expect((await client.listApiKeys()).find((k) => k.id === created.id)).toMatchObject({
      revoked: true,
      revokedAt: expect.any(String),
    });
    await expect(client.rotateApiKey(created.id)).rejects.toBeInstanceOf(ConflictError);

    await expect(env.client("rbn_not-a-real-token").list()).rejects.toBeInstanceOf(UnauthorizedError);
    // Dev mode is off in this environment: no token at all is refused too.
    await expect(env.client("").get("01890000-0000-7000-8000-000000000000")).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });
});
