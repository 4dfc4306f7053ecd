// What the official Python SDK 0.29.2 sends and reads (docs/interop.md D4, D13, O1–O3): agent
// metadata, optional `decided_by`, `on_behalf_of`, no `null` in optional fields, `/previous`.
import { parseAgent, parseExecution } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { type Answer, DEFAULT_AGENTS, Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

const BUNDLE = `default_action: allow
rules:
  - id: reviewed
    when: { target: refund }
    then:
      decision: require_approval
      approval_config: { approvers: ["alice"], timeout: 10m }
  - id: anyone
    when: { target: deploy }
    then: { decision: require_approval, approval_config: { timeout: 1m } }
  - id: nope
    when: { target: rm }
    then: { decision: deny, reason: never }
`;

const agents = [{ ...DEFAULT_AGENTS[0]!, policy: BUNDLE }, DEFAULT_AGENTS[1]!];

// The Python SDK's `json.dumps` spacing: the schema must come back byte-exact.
const METADATA_RAW =
  '{"description": "interop tools agent", "input_schema": {"type": "object", "properties": {"n": {"type": "number"}}, "x": 1.0}, "output_schema": null}';

/**
 * Keys whose values are user JSON (any value, `null` included, is legitimate there) — everything
 * else in an Execution, StepDecision, Step, Approval, Agent or Event must never be `null` (D4).
 */
const OPAQUE = new Set([
  "input",
  "output",
  "args",
  "result",
  "error",
  "state",
  "input_schema",
  "output_schema",
]);

/** Paths of every `null` outside opaque values. */
function nullPaths(value: unknown, path = "$"): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, `${path}[${i}]`));
  if (typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    OPAQUE.has(k) ? [] : nullPaths(v, `${path}.${k}`),
  );
}

describe.each(stores)("interop with the official Python SDK ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("O1: PUT /v0/agents/{id}/metadata stores description and schemas, shown on the agent", async () => {
    h = await Harness.start(store, { agents });
    const put = await h.agent("PUT", "/v0/agents/alpha/metadata", { raw: METADATA_RAW });
    expect(put.status, put.text).toBe(204);
    expect(put.text).toBe("");
    const one = await h.client("GET", "/v0/agents/alpha");
    expect(one.body).toMatchObject({
      id: "alpha",
      description: "interop tools agent",
      input_schema: { type: "object", properties: { n: { type: "number" } }, x: 1 },
    });
    expect(one.body).not.toHaveProperty("output_schema");
    // Byte-exact (the `1.0` literal survives; spacing is the stored raw text's).
    expect(one.text).toContain(
      '"input_schema":{"type": "object", "properties": {"n": {"type": "number"}}, "x": 1.0}',
    );
    expect(parseAgent(one.body).id).toBe("alpha");
    const list = await h.client("GET", "/v0/agents");
    expect(list.body.find((a: { id: string }) => a.id === "alpha").description).toBe("interop tools agent");
    expect(list.body.find((a: { id: string }) => a.id === "beta")).not.toHaveProperty("description");
    // Re-registering the agent keeps its metadata; a new PUT replaces all of it.
    await h.client("POST", "/v0/agents", {
      id: "alpha",
      webhook_url: "http://agents.test/alpha",
      secret: "alpha-secret",
    });
    expect((await h.client("GET", "/v0/agents/alpha")).body.description).toBe("interop tools agent");
    const second = await h.agent("PUT", "/v0/agents/alpha/metadata", {
      body: { output_schema: { type: "string" } },
    });
    expect(second.status).toBe(204);
    const after = (await h.client("GET", "/v0/agents/alpha")).body;
    expect(after).toMatchObject({ output_schema: { type: "string" } });
    expect(after).not.toHaveProperty("description");
    expect(after).not.toHaveProperty("input_schema");
  });

  test("O1: another agent's id → 403, bad bodies → 400, unsigned → 401; nothing stored", async () => {
    h = await Harness.start(store, { agents });
    const other = await h.agent("PUT", "/v0/agents/alpha/metadata", {
      agentId: "beta",
      body: { description: "x" },
    });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe("forbidden");
    const unknown = await h.agent("PUT", "/v0/agents/alpha/metadata", {
      body: { description: "x", version: 2 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("validation_error");
    const notObject = await h.agent("PUT", "/v0/agents/alpha/metadata", { body: { input_schema: [1] } });
    expect(notObject.status).toBe(400);
    const unsigned = await h.client("PUT", "/v0/agents/alpha/metadata", { description: "x" });
    expect(unsigned.status).toBe(401);
    const agent = (await h.client("GET", "/v0/agents/alpha")).body;
    expect(agent).not.toHaveProperty("description");
    // A metadata PUT needs no lease (the SDK sends none at start-up).
    expect((await h.agent("PUT", "/v0/agents/beta/metadata", { agentId: "beta", body: {} })).status).toBe(
      204,
    );
  });

  test("O2: decided_by is optional — allowed without approvers, 403 with them; empty rationale", async () => {
    h = await Harness.start(store, { agents });
    const { id, lease } = await h.started();
    const anyone = await h.submit(id, lease, { kind: "tool_call", target: "deploy", args: {} });
    expect(anyone.body.decision).toBe("blocked");
    // Exactly what `Client.deny_approval(id)` sends.
    const deny = await h.client("POST", `/v0/approvals/${anyone.body.approval_id}/deny`, '{"rationale":""}');
    expect(deny.status, deny.text).toBe(204);
    const denied = await h.client("GET", `/v0/approvals/${anyone.body.approval_id}`);
    expect(denied.body.status).toBe("denied");
    expect(denied.body).not.toHaveProperty("decided_by");
    expect(denied.body).not.toHaveProperty("rationale");
    const step = await h.client("GET", `/v0/executions/${id}/steps/${anyone.body.step_id}`);
    expect(step.body).toMatchObject({ status: "denied", error: { reason: "approval_denied" } });
    const decidedEvent = (await h.events(id)).find((e) => e.type === "approval.denied");
    expect(decidedEvent.payload).not.toHaveProperty("decided_by");
    expect(decidedEvent.payload).not.toHaveProperty("rationale");

    const w = await h.nextWebhook(id, 1);
    const reviewed = await h.submit(id, leaseOf(w), { kind: "tool_call", target: "refund", args: {} });
    expect(reviewed.body.decision).toBe("blocked");
    const before = await h.eventTypes(id);
    const refused = await h.client(
      "POST",
      `/v0/approvals/${reviewed.body.approval_id}/grant`,
      '{"rationale":"ok"}',
    );
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");
    expect((await h.client("GET", `/v0/approvals/${reviewed.body.approval_id}`)).body.status).toBe("pending");
    expect(await h.eventTypes(id)).toEqual(before);
    const granted = await h.client("POST", `/v0/approvals/${reviewed.body.approval_id}/grant`, {
      decided_by: "alice",
    });
    expect(granted.status).toBe(204);
  });

  test("O3: on_behalf_of is stored and echoed when non-empty", async () => {
    h = await Harness.start(store, { agents });
    const r = await h.client(
      "POST",
      "/v0/executions",
      '{"agent_id":"alpha","input":{"text":"for alice"},"on_behalf_of":"user:alice"}',
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body.on_behalf_of).toBe("user:alice");
    expect((await h.execution(r.body.id)).on_behalf_of).toBe("user:alice");
    expect(parseExecution(r.body).onBehalfOf).toBe("user:alice");
    const listed = (await h.client("GET", "/v0/executions?agent_id=alpha")).body.executions;
    expect(listed[0].on_behalf_of).toBe("user:alice");
    for (const obo of ['""', "null"]) {
      const e = await h.client("POST", "/v0/executions", `{"agent_id":"alpha","on_behalf_of":${obo}}`);
      expect(e.status).toBe(201);
      expect(e.body).not.toHaveProperty("on_behalf_of");
    }
    expect((await h.client("POST", "/v0/executions", { agent_id: "alpha", on_behalf_of: 7 })).status).toBe(
      400,
    );
  });

  test("D13: /previous always carries `state`, null when there is none", async () => {
    h = await Harness.start(store, { agents });
    const first = await h.started("alpha", { session: "s" });
    const alone = await h.client("GET", `/v0/executions/${first.id}/previous`);
    expect(alone.text).toBe('{"state":null}\n');
    // A parent that completed with neither output nor state (and a JSON-null state).
    await h.agent("POST", `/v0/executions/${first.id}/complete`, {
      raw: '{"state":null}',
      lease: first.lease,
    });
    const next = await h.create("alpha", { session: "s" });
    expect(next.parent_execution_id).toBe(first.id);
    const empty = await h.client("GET", `/v0/executions/${next.id}/previous`);
    expect(empty.status).toBe(200);
    expect(empty.text).toBe('{"state":null}\n');
  });

  test("D4: no optional field of any read or decision is null, even when requests sent nulls", async () => {
    h = await Harness.start(store, { agents });
    const seen: [string, Answer][] = [];
    const keep = (what: string, a: Answer): Answer => {
      seen.push([what, a]);
      return a;
    };
    const nulls = '"agent_version":null,"session":null,"idempotency_key":null,"parent_execution_id":null';
    const created = keep(
      "create",
      await h.client(
        "POST",
        "/v0/executions",
        `{"agent_id":"alpha","input":null,${nulls},"spawned_by":null,"on_behalf_of":null}`,
      ),
    );
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const lease = leaseOf(await h.webhook(id));
    await h.agent("PUT", "/v0/agents/alpha/metadata", {
      raw: '{"description":null,"input_schema":null,"output_schema":null}',
    });
    const proceed = keep(
      "proceed",
      await h.submit(id, lease, { kind: "tool_call", target: "t", args: null }),
    );
    keep("deny", await h.submit(id, lease, { kind: "tool_call", target: "rm", args: {} }));
    keep(
      "fail step",
      await h.agent("POST", `/v0/executions/${id}/steps/${proceed.body.step_id}/fail`, {
        raw: '{"error":null,"captures":null,"capture_failures":null}',
        lease,
      }),
    );
    const llm = keep("llm", await h.submit(id, lease, { kind: "llm_call", target: "m", args: { p: null } }));
    keep(
      "complete step",
      await h.agent("POST", `/v0/executions/${id}/steps/${llm.body.step_id}/complete`, {
        raw: '{"result":null,"captures":null}',
        lease,
      }),
    );
    keep("replay", await h.submit(id, lease, { kind: "tool_call", target: "t", args: null }));
    const blocked = keep(
      "blocked",
      await h.submit(id, lease, { kind: "tool_call", target: "deploy", args: {} }),
    );
    keep("approval", await h.client("GET", `/v0/approvals/${blocked.body.approval_id}`));
    h.advance(61_000);
    await h.kernel.tick();
    keep("expired", await h.client("GET", `/v0/approvals/${blocked.body.approval_id}`));
    keep("approvals", await h.client("GET", "/v0/approvals?status=all"));
    const w = await h.nextWebhook(id, 1);
    keep("rm replay", await h.submit(id, leaseOf(w), { kind: "tool_call", target: "rm", args: {} }));
    await h.agent("POST", `/v0/executions/${id}/fail`, { raw: '{"error":null}', lease: leaseOf(w) });
    keep("execution", await h.client("GET", `/v0/executions/${id}`));
    keep("list", await h.client("GET", "/v0/executions"));
    keep("steps", await h.client("GET", `/v0/executions/${id}/steps`));
    keep("events", await h.client("GET", `/v0/executions/${id}/events?limit=1000`));
    keep("agents", await h.client("GET", "/v0/agents"));

    for (const [what, a] of seen) {
      expect(a.status, `${what}: ${a.text}`).toBeLessThan(300);
      expect(nullPaths(a.body), `${what}: ${a.text}`).toEqual([]);
    }
    const exec = seen.find(([w2]) => w2 === "execution")![1].body;
    expect(exec.status).toBe("failed");
    expect(exec).not.toHaveProperty("failure_reason");
    // The walker itself catches a null (the check above cannot pass vacuously).
    expect(nullPaths({ a: { session: null }, input: null })).toEqual(["$.a.session"]);
  });
});
