// The differential scenarios: raw HTTP, run unchanged against our dev kernel and the Go kernel.
// Each scenario owns one agent (id = scenario name) with its own policy bundle, and records
// labelled observations with `rec(label, value)`; the runner normalises ids and times and
// compares the two transcripts label by label.
//
// Policies give every rule a unique `priority` whose ascending order is also the document order,
// except in `priority`, which is about exactly that.

const TOOLS = `default_action: allow
rules:
  - id: deny-wire
    priority: 10
    when: { target: wire_money }
    then: { decision: deny, reason: "wires need a human" }
  - id: approve-refund
    priority: 20
    when: { target: refund }
    then:
      decision: require_approval
      approval_config: { approvers: [ops], message: "refund over the limit" }
`;

const tool = (target, args, idempotency) =>
  JSON.stringify(
    idempotency === undefined
      ? { kind: "tool_call", target, args }
      : { kind: "tool_call", target, args, idempotency },
  );

/** Create an execution and wait for its (acknowledged) first dispatch. */
async function begin(w, a, rec, input = { n: 1 }) {
  const created = await w.client("POST", "/v0/executions", JSON.stringify({ agent_id: a, input }));
  rec("create", created);
  const id = created.body.id;
  const lease = await w.dispatch(a, id);
  rec("webhook keys", Object.keys(lease).sort());
  return { id, lease };
}

/**
 * The execution's steps. Both kernels list them by step id, a hash that differs with the execution
 * id, so they are sorted by (target, args hash, occurrence, kind) here to compare like with like.
 */
async function stepList(w, id) {
  const r = await w.client("GET", `/v0/executions/${id}/steps`);
  if (!Array.isArray(r.body)) return r;
  const key = (s) =>
    `${s.target}\u0000${s.args_hash}\u0000${String(s.occurrence).padStart(4, "0")}\u0000${s.kind}`;
  return { ...r, body: [...r.body].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0)) };
}

/** Final state: execution, steps, the event type sequence with payloads. */
async function finish(w, rec, id) {
  rec("execution", await w.client("GET", `/v0/executions/${id}`));
  rec("steps", await stepList(w, id));
  rec(
    "events",
    (await w.events(id)).map((e) => ({ seq: e.event_seq, type: e.type, payload: e.payload })),
  );
}

/** Check the step id against the protocol's derivation (recorded as a boolean per kernel). */
export function stepIdCheck(computeStepId, execId, decision, kind, target, argsHash, occurrence = 0) {
  return decision?.step_id === computeStepId(execId, kind, target, argsHash, occurrence);
}

export const SCENARIOS = [
  {
    name: "complete",
    policy: TOOLS,
    async run({ w, a, rec, ids }) {
      const { id, lease } = await begin(w, a, rec);
      rec("get as agent", await w.agent(a, "GET", `/v0/executions/${id}`));
      const body = tool("lookup", { q: "x", n: [1, 2.5, "é"] }, "safe_to_retry");
      const d = await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease });
      rec("submit", d);
      const steps = await w.client("GET", `/v0/executions/${id}/steps`);
      const step = steps.body[0];
      rec("args hash", step?.args_hash);
      rec("step id derivation", ids(id, d.body, "tool_call", "lookup", step?.args_hash));
      rec("heartbeat", await w.agent(a, "POST", `/v0/executions/${id}/heartbeat`, "", { lease }));
      const res = JSON.stringify({ result: { hits: 3 } });
      rec(
        "complete step",
        await w.agent(a, "POST", `/v0/executions/${id}/steps/${d.body.step_id}/complete`, res, { lease }),
      );
      rec("get step", await w.agent(a, "GET", `/v0/executions/${id}/steps/${d.body.step_id}`));
      rec("resubmit (replay)", await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease }));
      const out = JSON.stringify({ output: { done: true } });
      rec("complete execution", await w.agent(a, "POST", `/v0/executions/${id}/complete`, out, { lease }));
      rec("complete again", await w.agent(a, "POST", `/v0/executions/${id}/complete`, out, { lease }));
      rec(
        "submit after end",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("later", {}), { lease }),
      );
      await finish(w, rec, id);
    },
  },
  {
    name: "fail",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const d = await w.agent(
        a,
        "POST",
        `/v0/executions/${id}/steps`,
        tool("flaky", { k: 1 }, "at_most_once"),
        { lease },
      );
      rec("submit", d);
      const err = JSON.stringify({ error: { message: "boom", type: "ToolError" } });
      rec(
        "fail step",
        await w.agent(a, "POST", `/v0/executions/${id}/steps/${d.body.step_id}/fail`, err, { lease }),
      );
      rec(
        "resubmit (replay error)",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("flaky", { k: 1 }, "at_most_once"), {
          lease,
        }),
      );
      rec(
        "fail execution",
        await w.agent(a, "POST", `/v0/executions/${id}/fail`, JSON.stringify({ error: "tool_error: boom" }), {
          lease,
        }),
      );
      await finish(w, rec, id);
    },
  },
  {
    name: "deny",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const body = tool("wire_money", { amount: 5 });
      rec("submit", await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease }));
      rec("resubmit", await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease }));
      rec(
        "llm allowed",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/steps`,
          JSON.stringify({ kind: "llm_call", target: "openai:gpt", args: { m: 1 } }),
          { lease },
        ),
      );
      rec(
        "fail execution",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/fail`,
          JSON.stringify({ error: "policy_denied: wires need a human" }),
          { lease },
        ),
      );
      await finish(w, rec, id);
    },
  },
  {
    name: "priority",
    // 990 deny is listed first; 980 allow has the lower number and wins in the Go kernel.
    policy: `default_action: deny
rules:
  - id: deny-late
    priority: 990
    when: { target: "send_*" }
    then: { decision: deny, reason: "990 deny" }
  - id: allow-early
    priority: 980
    when: { target: "send_*" }
    then: { decision: allow }
`,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      rec(
        "submit",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("send_mail", { to: "a" }), { lease }),
      );
      rec(
        "unmatched tool (default deny)",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("other", {}), { lease }),
      );
      rec(
        "unmatched local",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/steps`,
          JSON.stringify({ kind: "local", target: "pure", args: {} }),
          { lease },
        ),
      );
      rec("cancel", await w.client("POST", `/v0/executions/${id}/cancel`));
    },
  },
  {
    name: "approval-grant",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const body = tool("refund", { amount: 900 }, "at_most_once");
      const d = await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease });
      rec("submit", d);
      rec("execution blocked", await w.client("GET", `/v0/executions/${id}`));
      rec("approval", await w.client("GET", `/v0/approvals/${d.body.approval_id}`));
      rec(
        "grant by a non-approver",
        await w.client(
          "POST",
          `/v0/approvals/${d.body.approval_id}/grant`,
          JSON.stringify({ decided_by: "mallory" }),
        ),
      );
      rec(
        "grant without decided_by",
        await w.client("POST", `/v0/approvals/${d.body.approval_id}/grant`, "{}"),
      );
      rec(
        "grant",
        await w.client(
          "POST",
          `/v0/approvals/${d.body.approval_id}/grant`,
          JSON.stringify({ decided_by: "ops", rationale: "ok" }),
        ),
      );
      rec(
        "grant again",
        await w.client(
          "POST",
          `/v0/approvals/${d.body.approval_id}/grant`,
          JSON.stringify({ decided_by: "ops" }),
        ),
      );
      const lease2 = await w.dispatch(a, id, 2);
      rec("new dispatch id", lease2.dispatch_id !== lease.dispatch_id);
      rec(
        "old lease after redispatch (supersede)",
        await w.agent(a, "POST", `/v0/executions/${id}/heartbeat`, "", { lease }),
      );
      const again = await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease: lease2 });
      rec("resubmit after grant", again);
      rec(
        "complete step",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/steps/${d.body.step_id}/complete`,
          JSON.stringify({ result: { refunded: true } }),
          { lease: lease2 },
        ),
      );
      rec(
        "complete execution",
        await w.agent(a, "POST", `/v0/executions/${id}/complete`, JSON.stringify({ output: "ok" }), {
          lease: lease2,
        }),
      );
      rec("approval after", await w.client("GET", `/v0/approvals/${d.body.approval_id}`));
      await finish(w, rec, id);
    },
  },
  {
    name: "blocked-writes",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const d = await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("refund", { amount: 902 }), {
        lease,
      });
      rec("submit", d);
      rec(
        "heartbeat while blocked",
        await w.agent(a, "POST", `/v0/executions/${id}/heartbeat`, "", { lease }),
      );
      rec(
        "submit another step while blocked",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("lookup", {}), { lease }),
      );
      rec(
        "complete step awaiting approval",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/steps/${d.body.step_id}/complete`,
          JSON.stringify({ result: 1 }),
          { lease },
        ),
      );
      rec(
        "complete execution while blocked",
        await w.agent(a, "POST", `/v0/executions/${id}/complete`, JSON.stringify({ output: 1 }), { lease }),
      );
      rec("execution", await w.client("GET", `/v0/executions/${id}`));
      const c = await w.client("POST", `/v0/executions/${id}/cancel`);
      rec("cancel", c.status === 204 || c.status === 409);
    },
  },
  {
    name: "approval-deny",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const body = tool("refund", { amount: 901 });
      const d = await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease });
      rec("submit", d);
      rec(
        "pending approvals (this execution)",
        ((await w.client("GET", "/v0/approvals")).body ?? []).filter((x) => x.execution_id === id),
      );
      rec(
        "deny",
        await w.client(
          "POST",
          `/v0/approvals/${d.body.approval_id}/deny`,
          JSON.stringify({ decided_by: "ops", rationale: "too much" }),
        ),
      );
      const lease2 = await w.dispatch(a, id, 2);
      rec(
        "resubmit after deny",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease: lease2 }),
      );
      rec(
        "fail execution",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/fail`,
          JSON.stringify({ error: "policy_denied: too much" }),
          { lease: lease2 },
        ),
      );
      await finish(w, rec, id);
    },
  },
  {
    name: "indeterminate",
    policy: TOOLS,
    shortLease: true,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const body = tool("charge", { cents: 100 }, "at_most_once");
      rec("submit", await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease }));
      // The agent is lost: no heartbeat, no completion. The lease runs out and the kernel re-dispatches.
      const lease2 = await w.receiver.next(a, 30_000);
      await w.waitEvent(id, "dispatch.acked", 2);
      rec("redispatched", lease2.execution_id === id && lease2.dispatch_id !== lease.dispatch_id);
      rec(
        "resubmit (indeterminate)",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease: lease2 }),
      );
      rec("resubmit again", await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease: lease2 }));
      rec(
        "same effect new args",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/steps`,
          tool("charge", { cents: 101 }, "at_most_once"),
          { lease: lease2 },
        ),
      );
      rec(
        "fail execution",
        await w.agent(a, "POST", `/v0/executions/${id}/fail`, JSON.stringify({ error: "indeterminate" }), {
          lease: lease2,
        }),
      );
      const evs = await w.events(id);
      // Lease expiry timing differs (reaper vs 2 s tick): compare the step events only.
      rec(
        "step events",
        evs.filter((e) => e.type.startsWith("step.")).map((e) => ({ type: e.type, payload: e.payload })),
      );
      rec("steps", await stepList(w, id));
    },
  },
  {
    name: "cancel",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const d = await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("slow", { s: 1 }), { lease });
      rec("submit", d);
      rec("cancel", await w.client("POST", `/v0/executions/${id}/cancel`));
      rec("cancel again", await w.client("POST", `/v0/executions/${id}/cancel`));
      rec(
        "submit after cancel",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, tool("next", {}), { lease }),
      );
      rec(
        "heartbeat after cancel",
        await w.agent(a, "POST", `/v0/executions/${id}/heartbeat`, "", { lease }),
      );
      rec(
        "complete step after cancel",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${id}/steps/${d.body.step_id}/complete`,
          JSON.stringify({ result: 1 }),
          { lease },
        ),
      );
      rec(
        "complete execution after cancel",
        await w.agent(a, "POST", `/v0/executions/${id}/complete`, JSON.stringify({ output: 1 }), { lease }),
      );
      await finish(w, rec, id);
    },
  },
  {
    name: "cross-execution",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const one = await begin(w, a, rec, { n: 1 });
      const two = await begin(w, a, rec, { n: 2 });
      const d = await w.agent(a, "POST", `/v0/executions/${one.id}/steps`, tool("t", {}), {
        lease: one.lease,
      });
      rec("submit on one", d);
      rec(
        "submit with the other's dispatch",
        await w.agent(a, "POST", `/v0/executions/${one.id}/steps`, tool("u", {}), { lease: two.lease }),
      );
      rec(
        "complete one's step through two's URL",
        await w.agent(
          a,
          "POST",
          `/v0/executions/${two.id}/steps/${d.body.step_id}/complete`,
          JSON.stringify({ result: 1 }),
          { lease: two.lease },
        ),
      );
      rec("step of one", await w.client("GET", `/v0/executions/${one.id}/steps/${d.body.step_id}`));
      rec("step of one via two", await w.client("GET", `/v0/executions/${two.id}/steps/${d.body.step_id}`));
      rec("cancel one", await w.client("POST", `/v0/executions/${one.id}/cancel`));
      rec("cancel two", await w.client("POST", `/v0/executions/${two.id}/cancel`));
    },
  },
  {
    name: "signatures",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const body = tool("lookup", {});
      rec(
        "bad signature",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease, sign: "bad" }),
      );
      rec(
        "no signature",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, { lease, sign: "none" }),
      );
      rec(
        "unknown agent",
        await w.agent("nobody", "POST", `/v0/executions/${id}/steps`, body, { lease, secret: "x" }),
      );
      rec("no dispatch id", await w.agent(a, "POST", `/v0/executions/${id}/steps`, body));
      rec(
        "unknown dispatch id",
        await w.agent(a, "POST", `/v0/executions/${id}/steps`, body, {
          lease: { ...lease, dispatch_id: "01920000-0000-7000-8000-00000000dead" },
        }),
      );
      rec("cancel", await w.client("POST", `/v0/executions/${id}/cancel`));
    },
  },
  {
    name: "unknown-ids",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const ghost = "01920000-0000-7000-8000-000000000bad";
      rec("get execution", await w.client("GET", `/v0/executions/${ghost}`));
      rec("get execution (not a uuid)", await w.client("GET", "/v0/executions/not-a-uuid"));
      rec("events", await w.client("GET", `/v0/executions/${ghost}/events`));
      rec("steps", await w.client("GET", `/v0/executions/${ghost}/steps`));
      rec("step", await w.client("GET", `/v0/executions/${ghost}/steps/abc`));
      rec("cancel", await w.client("POST", `/v0/executions/${ghost}/cancel`));
      rec("approval", await w.client("GET", `/v0/approvals/${ghost}`));
      rec(
        "grant",
        await w.client("POST", `/v0/approvals/${ghost}/grant`, JSON.stringify({ decided_by: "ops" })),
      );
      rec("agent", await w.client("GET", "/v0/agents/ghost-agent"));
      rec(
        "create for unknown agent",
        await w.client("POST", "/v0/executions", JSON.stringify({ agent_id: "ghost-agent", input: 1 })),
      );
      rec("unknown route", await w.client("GET", "/v0/nothing-here"));
      rec("wrong method", await w.client("DELETE", "/v0/executions"));
      rec(
        "submit to unknown execution",
        await w.agent(a, "POST", `/v0/executions/${ghost}/steps`, tool("x", {}), {
          lease: { dispatch_id: ghost, dispatch_attempt: 1 },
        }),
      );
    },
  },
  {
    name: "malformed",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const { id, lease } = await begin(w, a, rec);
      const step = (b) => w.agent(a, "POST", `/v0/executions/${id}/steps`, b, { lease });
      rec("step: not json", await step("{"));
      rec("step: bad kind", await step(JSON.stringify({ kind: "teleport", target: "x", args: {} })));
      rec(
        "step: bad idempotency",
        await step(JSON.stringify({ kind: "tool_call", target: "x", args: {}, idempotency: "maybe" })),
      );
      rec("step: empty target", await step(JSON.stringify({ kind: "tool_call", target: "", args: {} })));
      rec(
        "step: resources (newer field)",
        await step(JSON.stringify({ kind: "tool_call", target: "x", args: {}, resources: [] })),
      );
      rec("complete: not json", await w.agent(a, "POST", `/v0/executions/${id}/complete`, "{", { lease }));
      rec("cancel", await w.client("POST", `/v0/executions/${id}/cancel`));
      // Creates last: a wrongly accepted one starts an execution nobody waits for.
      const post = (body) => w.client("POST", "/v0/executions", body);
      rec("not json", await post("{nope"));
      rec("empty body", await post(""));
      rec("unknown field", await post(JSON.stringify({ agent_id: a, input: 1, colour: "red" })));
      rec("trailing garbage", await post(`${JSON.stringify({ agent_id: a, input: 1 })} trailing`));
      rec("wrong type", await post(JSON.stringify({ agent_id: 7 })));
      rec("missing agent_id", await post(JSON.stringify({ input: 1 })));
      rec("session (newer field)", await post(JSON.stringify({ agent_id: a, session: "s1" })));
    },
  },
  {
    name: "agents",
    policy: TOOLS,
    async run({ w, rec }) {
      const body = JSON.stringify({
        id: "registered-later",
        webhook_url: "http://127.0.0.1:9/hook",
        secret: "s3cret",
      });
      rec("register", await w.client("POST", "/v0/agents", body));
      rec("get", await w.client("GET", "/v0/agents/registered-later"));
      rec(
        "policy",
        await w.client("POST", "/v0/policies/registered-later", JSON.stringify({ bundle: TOOLS })),
      );
      const dup =
        "rules:\n  - { id: a, priority: 5, when: { target: x }, then: { decision: allow } }\n  - { id: b, priority: 5, when: { target: y }, then: { decision: deny } }\n";
      rec(
        "duplicate priority refused",
        await w.client("POST", "/v0/policies/registered-later", JSON.stringify({ bundle: dup })),
      );
      rec("delete", await w.client("DELETE", "/v0/agents/registered-later"));
    },
  },
  {
    name: "oversized",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const big = JSON.stringify({ agent_id: a, input: "x".repeat(10 * 1024 * 1024) });
      const r = await w.client("POST", "/v0/executions", big);
      rec("create over 10 MiB", { status: r.status, code: r.body?.code });
    },
  },
  {
    name: "listing",
    policy: TOOLS,
    async run({ w, a, rec }) {
      const one = await begin(w, a, rec, { n: 1 });
      const two = await begin(w, a, rec, { n: 2 });
      const page = await w.client("GET", `/v0/executions?agent_id=${a}&limit=1`);
      rec("first page", page);
      rec(
        "second page",
        await w.client("GET", `/v0/executions?agent_id=${a}&limit=1&cursor=${page.body.next_cursor}`),
      );
      rec("bad cursor", await w.client("GET", "/v0/executions?cursor=nope"));
      rec("bad limit", await w.client("GET", "/v0/executions?limit=x"));
      rec(
        "events after_seq=2 limit=2",
        await w.client("GET", `/v0/executions/${one.id}/events?after_seq=2&limit=2`),
      );
      rec("terminal steps filter", await w.client("GET", `/v0/executions/${one.id}/steps?status=terminal`));
      // Listing order: both kernels list steps by step id, not by recording order.
      const three = await begin(w, a, rec, { n: 3 });
      for (const target of ["c_recorded_first", "a_recorded_second", "b_recorded_third"]) {
        await w.agent(a, "POST", `/v0/executions/${three.id}/steps`, tool(target, {}), {
          lease: three.lease,
        });
      }
      const listed = (await w.client("GET", `/v0/executions/${three.id}/steps`)).body.map((s) => s.step_id);
      rec(
        "three steps listed in step-id order",
        listed.length === 3 && listed.every((x, i) => i === 0 || listed[i - 1] < x),
      );
      for (const x of [one, two, three]) await w.client("POST", `/v0/executions/${x.id}/cancel`);
    },
  },
];
