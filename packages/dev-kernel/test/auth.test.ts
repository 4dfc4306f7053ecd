// Authentication (docs/protocol.md §3, §1.11): v1 agent signatures, agent ownership, dual routes,
// bearer tokens with scoped API keys, dev mode.
import { afterEach, describe, expect, test } from "vitest";
import { Harness } from "./harness.js";
import { stores } from "./stores.js";

const ROOT = "root-token";

describe.each(stores)("auth ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("agent signatures: missing, bad, stale or unknown → 401; the window is ±300 s inclusive", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const path = `/v0/executions/${id}/heartbeat`;
    const now = Math.floor(h.now / 1000);
    const cases: [string, Parameters<Harness["agent"]>[2]][] = [
      ["wrong secret", { lease, secret: "nope" }],
      ["tampered signature", { lease, signature: `v1=${"0".repeat(64)}` }],
      ["old scheme", { lease, signature: `sha256=${"0".repeat(64)}` }],
      ["stale", { lease, timestamp: now - 301 }],
      ["future", { lease, timestamp: now + 301 }],
      ["junk timestamp", { lease, timestamp: `${now}abc` }],
      ["unknown agent", { lease, agentId: "ghost", secret: "x" }],
    ];
    for (const [name, call] of cases) {
      const r = await h.agent("POST", path, call);
      expect(r.status, name).toBe(401);
      expect(r.body.code, name).toBe("unauthorized");
    }
    expect((await h.agent("POST", path, { lease, timestamp: now - 300 })).status).toBe(204);
    expect((await h.agent("POST", path, { lease, timestamp: now + 300 })).status).toBe(204);
    const unsigned = await h.client("POST", path);
    expect(unsigned.status).toBe(401);
  });

  test("the signature covers method, target, lease headers and body", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const body = JSON.stringify({ kind: "local", target: "x" });
    const good = await h.agent("POST", `/v0/executions/${id}/steps`, { raw: body, lease });
    expect(good.status).toBe(200);
    // Sign one body, send another (same length).
    const { signRequest } = await import("@rebuno/protocol");
    const ts = String(Math.floor(h.now / 1000));
    const sig = signRequest({
      secret: "alpha-secret",
      method: "POST",
      target: `/v0/executions/${id}/steps`,
      timestamp: ts,
      dispatchId: lease.dispatchId,
      dispatchAttempt: lease.attempt,
      body: body.replace('"x"', '"y"'),
    });
    const tampered = await h.agent("POST", `/v0/executions/${id}/steps`, {
      raw: body,
      lease,
      signature: sig,
    });
    expect(tampered.status).toBe(401);
    const wrongAttempt = await h.agent("POST", `/v0/executions/${id}/steps`, {
      raw: body,
      lease,
      signature: sig.replace(/.$/, (c) => (c === "0" ? "1" : "0")),
    });
    expect(wrongAttempt.status).toBe(401);
  });

  test("an agent may only touch its own executions (403), reads included", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started("alpha");
    const submit = await h.agent("POST", `/v0/executions/${id}/steps`, {
      agentId: "beta",
      body: { kind: "local", target: "x" },
      lease,
    });
    expect(submit.status).toBe(403);
    expect(submit.body.code).toBe("forbidden");
    const read = await h.agent("GET", `/v0/executions/${id}`, { agentId: "beta" });
    expect(read.status).toBe(403);
    const own = await h.agent("GET", `/v0/executions/${id}`);
    expect(own.status).toBe(200);
    const steps = await h.agent("GET", `/v0/executions/${id}/steps`);
    expect(steps.status).toBe(200);
    // Agent routes never accept bearer tokens.
    expect((await h.client("POST", `/v0/executions/${id}/heartbeat`, undefined, ROOT)).status).toBe(401);
  });

  test("server mode: bearer required; scoped keys get 403 without the scope; revoked and rotated keys are 401", async () => {
    h = await Harness.start(store, { devMode: false, bootstrapToken: ROOT });
    expect((await h.client("GET", "/v0/executions")).status).toBe(401);
    expect((await h.client("GET", "/v0/executions", undefined, "wrong")).status).toBe(401);
    expect((await h.client("GET", "/v0/executions", undefined, ROOT)).status).toBe(200);
    expect((await h.client("GET", "/v0/executions", undefined, ROOT.toUpperCase())).status).toBe(401);

    const made = await h.client(
      "POST",
      "/v0/api-keys",
      { name: "reader", scopes: ["executions:read"] },
      ROOT,
    );
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.any(String),
      name: "reader",
      scopes: ["executions:read"],
      created_at: "2026-07-07T12:00:00Z",
      token: expect.any(String),
    });
    const reader = made.body.token as string;
    expect((await h.client("GET", "/v0/executions", undefined, reader)).status).toBe(200);
    const write = await h.client("POST", "/v0/executions", { agent_id: "alpha" }, reader);
    expect(write.status).toBe(403);
    expect(write.body.code).toBe("forbidden");
    expect((await h.client("GET", "/v0/api-keys", undefined, reader)).status).toBe(403);

    const listed = await h.client("GET", "/v0/api-keys", undefined, ROOT);
    expect(listed.body).toEqual([
      { id: made.body.id, name: "reader", scopes: ["executions:read"], created_at: "2026-07-07T12:00:00Z" },
    ]);

    const rotated = await h.client("POST", `/v0/api-keys/${made.body.id}/rotate`, undefined, ROOT);
    expect(rotated.status).toBe(200);
    expect(rotated.body.token).not.toBe(reader);
    expect((await h.client("GET", "/v0/executions", undefined, reader)).status).toBe(401);
    const fresh = rotated.body.token as string;
    expect((await h.client("GET", "/v0/executions", undefined, fresh)).status).toBe(200);

    expect((await h.client("DELETE", `/v0/api-keys/${made.body.id}`, undefined, ROOT)).status).toBe(204);
    expect((await h.client("DELETE", `/v0/api-keys/${made.body.id}`, undefined, ROOT)).status).toBe(204);
    expect((await h.client("GET", "/v0/executions", undefined, fresh)).status).toBe(401);
    const revokedRotate = await h.client("POST", `/v0/api-keys/${made.body.id}/rotate`, undefined, ROOT);
    expect(revokedRotate.status).toBe(409);
    const after = await h.client("GET", "/v0/api-keys", undefined, ROOT);
    expect(after.body[0].revoked_at).toBe("2026-07-07T12:00:00Z");
  });

  test("scopes: write does not imply read; policy test needs both scopes", async () => {
    h = await Harness.start(store, { devMode: false, bootstrapToken: ROOT });
    const key = async (scopes: string[]) =>
      (await h.client("POST", "/v0/api-keys", { name: scopes.join("+"), scopes }, ROOT)).body.token as string;
    const writer = await key(["executions:write"]);
    const created = await h.client("POST", "/v0/executions", { agent_id: "alpha" }, writer);
    expect(created.status).toBe(201);
    expect((await h.client("GET", `/v0/executions/${created.body.id}`, undefined, writer)).status).toBe(403);
    const policies = await key(["policies:write"]);
    const test1 = await h.client("POST", "/v0/policies/alpha/test", { cases: [] }, policies);
    expect(test1.status).toBe(403);
    const both = await key(["policies:write", "executions:read"]);
    expect((await h.client("POST", "/v0/policies/alpha/test", { cases: [] }, both)).status).toBe(200);
    const approvals = await key(["approvals:read"]);
    expect((await h.client("GET", "/v0/approvals", undefined, approvals)).status).toBe(200);
    expect((await h.client("GET", "/v0/agents", undefined, approvals)).status).toBe(403);
    const agents = await key(["agents:read"]);
    expect((await h.client("GET", "/v0/agents", undefined, agents)).status).toBe(200);
    const badScope = await h.client("POST", "/v0/api-keys", { name: "x", scopes: ["root"] }, ROOT);
    expect(badScope.status).toBe(400);
  });

  test("dev mode: anonymous is full access, but a supplied token is still checked", async () => {
    h = await Harness.start(store, { bootstrapToken: ROOT });
    expect((await h.client("GET", "/v0/executions")).status).toBe(200);
    expect((await h.client("GET", "/v0/executions", undefined, "made-up")).status).toBe(401);
    expect((await h.client("GET", "/v0/executions", undefined, ROOT)).status).toBe(200);
    const malformed = await h.kernel.fetch(
      new Request("http://kernel.test/v0/executions", { headers: { authorization: "Basic abc" } }),
    );
    expect(malformed.status).toBe(401);
  });

  test("health, ready and metrics need no auth", async () => {
    h = await Harness.start(store, { devMode: false, bootstrapToken: ROOT });
    expect((await h.client("GET", "/v0/health")).body).toEqual({ status: "ok" });
    expect((await h.client("GET", "/v0/ready")).body).toEqual({ status: "ready" });
    expect((await h.client("POST", "/v0/executions", { agent_id: "alpha" }, ROOT)).status).toBe(201);
    const m = await h.client("GET", "/metrics");
    expect(m.status).toBe(200);
    expect(m.headers.get("content-type")).toContain("text/plain");
    expect(m.text).toContain("rebuno_executions_created_total 1");
    expect(m.text).toContain('rebuno_http_requests_total{code="201"} 1');
    expect(m.text).toMatch(/# TYPE rebuno_dispatch_queue_depth gauge/);
  });

  test("ready answers 503 unavailable once close() began (while it drains a delivery)", async () => {
    h = await Harness.start(store);
    const release = h.holdWebhooks();
    await h.create();
    // The delivery is in flight (held), so close() cannot finish before we ask.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closing = h.kernel.close();
    let r: Awaited<ReturnType<Harness["client"]>>;
    try {
      r = await h.client("GET", "/v0/ready");
    } finally {
      release();
      await closing;
    }
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ status: "unavailable" });
  });
});
