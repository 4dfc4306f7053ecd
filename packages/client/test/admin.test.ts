import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeKernel, startFakeKernel, wireExecution } from "./fake-kernel.js";
import { clientFor } from "./helpers.js";

const ID = "0192f1a0-0000-7000-8000-000000000000";
const STEP = "9a3f".padEnd(64, "0");
const APPROVAL = "0192aaaa-0000-7000-8000-000000000001";

const wireStep = {
  step_id: STEP,
  execution_id: ID,
  kind: "tool_call",
  target: "web_search",
  args_hash: "c".repeat(64),
  occurrence: 0,
  status: "succeeded",
  args: { q: "rebuno" },
  result: { hits: 3 },
  started_at: "2026-07-07T12:00:01Z",
  completed_at: "2026-07-07T12:00:02Z",
};
const wireApproval = {
  id: APPROVAL,
  step_id: STEP,
  execution_id: ID,
  status: "pending",
  approvers: ["alice", "bob"],
  message: "check the target path before granting",
  timeout_at: "2026-07-07T12:05:00Z",
  created_at: "2026-07-07T12:00:00Z",
};
const wireAgent = {
  id: "researcher",
  webhook_url: "http://localhost:5001/webhook",
  policy_bundle: "default_action: deny\nrules: []\n",
  registered_at: "2026-07-07T11:00:00Z",
  lease_timeout_seconds: 600,
};
const wireKey = {
  id: "0192bbbb-0000-7000-8000-000000000001",
  name: "reader",
  scopes: ["executions:read"],
  created_at: "2026-07-07T11:00:00Z",
  token: "rbk_secret",
};

let kernel: FakeKernel;
beforeEach(async () => {
  kernel = await startFakeKernel();
});
afterEach(async () => {
  await kernel.close();
});

const line = (i: number) => {
  const r = kernel.requests[i]!;
  return `${r.method} ${r.path}${r.search}`;
};

describe("steps and forks", () => {
  it("listSteps, with and without the terminal filter; getStep", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 200, json: [wireStep] },
      { status: 200, json: null },
      { status: 200, json: wireStep },
    );
    const steps = await client.listSteps(ID);
    expect(steps[0]).toEqual({
      stepId: STEP,
      executionId: ID,
      kind: "tool_call",
      target: "web_search",
      argsHash: "c".repeat(64),
      occurrence: 0,
      status: "succeeded",
      idempotency: "safe_to_retry",
      args: { q: "rebuno" },
      result: { hits: 3 },
      startedAt: "2026-07-07T12:00:01Z",
      completedAt: "2026-07-07T12:00:02Z",
    });
    expect(await client.listSteps(ID, { status: "terminal" })).toEqual([]);
    expect((await client.getStep(ID, STEP)).target).toBe("web_search");
    expect([line(0), line(1), line(2)]).toEqual([
      `GET /v0/executions/${ID}/steps`,
      `GET /v0/executions/${ID}/steps?status=terminal`,
      `GET /v0/executions/${ID}/steps/${STEP}`,
    ]);
  });

  it("getStep throws NotFoundError for a missing step", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 404, json: { code: "not_found", message: "not found: step" } });
    await expect(client.getStep(ID, STEP)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("fork sends at_seq and only the given options; forkPoints parses coverage", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 201, json: wireExecution({ id: "f1", forked_from: ID, fork_seq: 12 }) },
      { status: 201, json: wireExecution({ id: "f2" }) },
      {
        status: 200,
        json: {
          latest_seq: 40,
          resources: { workspace: 3 },
          checkpoints: [{ key: "workspace", generation: 2, checkpoint_ref: "snap-1", covered_seq: 10 }],
        },
      },
    );
    const fork = await client.fork(ID, { atSeq: 12, session: "s2", policyBundle: "rules: []\n" });
    expect(fork).toMatchObject({ id: "f1", forkedFrom: ID, forkSeq: 12 });
    await client.fork(ID, { atSeq: 0, session: "" });
    expect(kernel.requests[0]!.body).toEqual({ at_seq: 12, session: "s2", policy_bundle: "rules: []\n" });
    expect(kernel.requests[1]!.bodyText).toBe('{"at_seq":0}');
    expect(line(0)).toBe(`POST /v0/executions/${ID}/fork`);
    expect(await client.forkPoints(ID)).toEqual({
      latestSeq: 40,
      resources: { workspace: 3 },
      checkpoints: [{ key: "workspace", generation: 2, checkpointRef: "snap-1", coveredSeq: 10 }],
    });
    expect(line(2)).toBe(`GET /v0/executions/${ID}/fork-points`);
    await expect(client.fork(ID, { atSeq: -1 })).rejects.toBeInstanceOf(ValidationError);
    expect(kernel.requests).toHaveLength(3);
  });
});

describe("approvals", () => {
  it("lists pending by default, or the given status, and gets one", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 200, json: [wireApproval] },
      { status: 200, json: [] },
      { status: 200, json: wireApproval },
    );
    const [a] = await client.listApprovals();
    expect(a).toEqual({
      id: APPROVAL,
      stepId: STEP,
      executionId: ID,
      status: "pending",
      approvers: ["alice", "bob"],
      message: "check the target path before granting",
      timeoutAt: "2026-07-07T12:05:00Z",
      createdAt: "2026-07-07T12:00:00Z",
    });
    await client.listApprovals({ status: "granted" });
    await client.getApproval(APPROVAL);
    expect([line(0), line(1), line(2)]).toEqual([
      "GET /v0/approvals?status=pending",
      "GET /v0/approvals?status=granted",
      `GET /v0/approvals/${APPROVAL}`,
    ]);
  });

  it("grant and deny send decided_by and an optional rationale", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 204 }, { status: 204 });
    await client.grantApproval(APPROVAL, { decidedBy: "alice", rationale: "looks fine" });
    await client.denyApproval(APPROVAL, { decidedBy: "bob", rationale: "" });
    expect(line(0)).toBe(`POST /v0/approvals/${APPROVAL}/grant`);
    expect(kernel.requests[0]!.bodyText).toBe('{"decided_by":"alice","rationale":"looks fine"}');
    expect(line(1)).toBe(`POST /v0/approvals/${APPROVAL}/deny`);
    expect(kernel.requests[1]!.bodyText).toBe('{"decided_by":"bob"}');
  });

  it("maps not-pending to ConflictError and a non-approver to ForbiddenError", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 409, json: { code: "conflict", message: "conflict: approval is granted" } },
      {
        status: 403,
        json: { code: "forbidden", message: 'forbidden: "carol" is not an approver for this approval' },
      },
    );
    await expect(client.grantApproval(APPROVAL, { decidedBy: "alice" })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(client.denyApproval(APPROVAL, { decidedBy: "carol" })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(client.grantApproval(APPROVAL, { decidedBy: "" })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe("agents and policies", () => {
  it("registers (snake_case body), lists, gets and deletes agents", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 201, json: wireAgent },
      { status: 200, json: [wireAgent] },
      { status: 200, json: wireAgent },
      { status: 204 },
    );
    const agent = await client.registerAgent({
      id: "researcher",
      webhookUrl: "http://localhost:5001/webhook",
      secret: "researcher-secret",
      leaseTimeoutSeconds: 600,
    });
    expect(agent).toEqual({
      id: "researcher",
      webhookUrl: "http://localhost:5001/webhook",
      policyBundle: "default_action: deny\nrules: []\n",
      registeredAt: "2026-07-07T11:00:00Z",
      leaseTimeoutSeconds: 600,
    });
    expect(kernel.requests[0]!.bodyText).toBe(
      '{"id":"researcher","webhook_url":"http://localhost:5001/webhook","secret":"researcher-secret","lease_timeout_seconds":600}',
    );
    expect((await client.listAgents()).map((a) => a.id)).toEqual(["researcher"]);
    expect((await client.getAgent("researcher")).webhookUrl).toBe("http://localhost:5001/webhook");
    await client.deleteAgent("researcher");
    expect([line(0), line(1), line(2), line(3)]).toEqual([
      "POST /v0/agents",
      "GET /v0/agents",
      "GET /v0/agents/researcher",
      "DELETE /v0/agents/researcher",
    ]);
    expect(kernel.requests[3]!.bodyText).toBe("");
  });

  it("sets and tests policies", async () => {
    const client = clientFor(kernel);
    const result = { cases: [{ decision: "deny", expected: "deny" }], mismatches: 0 };
    kernel.reply({ status: 204 }, { status: 200, json: result }, { status: 200, json: {} });
    await client.setPolicy("researcher", "default_action: allow\nrules: []\n");
    expect(
      await client.testPolicy("researcher", {
        bundle: "default_action: deny\n",
        cases: [{ target: "rm" }],
        executionId: ID,
        executions: { session: "s", limit: 5 },
      }),
    ).toEqual(result);
    await client.testPolicy("researcher");
    expect(line(0)).toBe("POST /v0/policies/researcher");
    expect(kernel.requests[0]!.body).toEqual({ bundle: "default_action: allow\nrules: []\n" });
    expect(line(1)).toBe("POST /v0/policies/researcher/test");
    expect(kernel.requests[1]!.body).toEqual({
      bundle: "default_action: deny\n",
      cases: [{ target: "rm" }],
      execution_id: ID,
      executions: { session: "s", limit: 5 },
    });
    expect(kernel.requests[2]!.bodyText).toBe("{}");
  });

  it("an invalid bundle is a ValidationError with the kernel's message", async () => {
    const client = clientFor(kernel);
    kernel.reply({
      status: 400,
      json: { code: "validation_error", message: "invalid policy bundle: bad yaml" },
    });
    await expect(client.setPolicy("researcher", ":")).rejects.toThrow("invalid policy bundle: bad yaml");
  });
});

describe("API keys", () => {
  it("creates, lists, rotates and revokes", async () => {
    const client = clientFor(kernel);
    const revoked = { ...wireKey, token: undefined, revoked_at: "2026-07-08T00:00:00Z" };
    kernel.reply(
      { status: 201, json: wireKey },
      { status: 200, json: [revoked] },
      { status: 200, json: { ...wireKey, token: "rbk_new" } },
      { status: 204 },
    );
    const key = await client.createApiKey({ name: "reader", scopes: ["executions:read"] });
    expect(key).toEqual({
      id: wireKey.id,
      name: "reader",
      scopes: ["executions:read"],
      createdAt: "2026-07-07T11:00:00Z",
      token: "rbk_secret",
      revoked: false,
    });
    expect(kernel.requests[0]!.bodyText).toBe('{"name":"reader","scopes":["executions:read"]}');
    const [listed] = await client.listApiKeys();
    expect(listed).toMatchObject({ revoked: true, revokedAt: "2026-07-08T00:00:00Z" });
    expect(listed!.token).toBeUndefined();
    expect((await client.rotateApiKey(wireKey.id)).token).toBe("rbk_new");
    await client.revokeApiKey(wireKey.id);
    expect([line(0), line(1), line(2), line(3)]).toEqual([
      "POST /v0/api-keys",
      "GET /v0/api-keys",
      `POST /v0/api-keys/${wireKey.id}/rotate`,
      `DELETE /v0/api-keys/${wireKey.id}`,
    ]);
  });

  it("rotating a revoked key is a ConflictError", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 409, json: { code: "conflict", message: "conflict: key revoked" } });
    await expect(client.rotateApiKey("k")).rejects.toBeInstanceOf(ConflictError);
  });
});
