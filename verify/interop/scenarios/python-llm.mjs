// LLM calls through the official SDK's rebuno.http_client() against a fake provider served by the
// test: a plain JSON call, a streamed (SSE) call with live deltas, and a call refused by policy (the
// SDK answers it itself with a 403 `rebuno_refusal` body). An approval then forces a second dispatch,
// where both provider calls must replay from the kernel without reaching the provider again.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer } from "node:http";
import { allEvents, plain, waitFor, waitForStatus } from "../lib/harness.mjs";

const POLICY = `default_action: allow
rules:
  - id: no-forbidden-model
    priority: 10
    when: { step_kind: llm_call, target: forbidden-model }
    then: { decision: deny, reason: no forbidden models }
  - id: confirm-needs-human
    priority: 20
    when: { target: confirm }
    then: { decision: require_approval }
`;

const SSE_CHUNKS = ['data: {"delta":"Hel"}\n\n', 'data: {"delta":"lo"}\n\n', "data: [DONE]\n\n"];

function fakeProvider() {
  const hits = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    const json = JSON.parse(body);
    hits.push(json);
    if (json.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const chunk of SSE_CHUNKS) {
        res.write(chunk);
        await new Promise((r) => setTimeout(r, 80));
      }
      res.end();
      return;
    }
    const reply = JSON.stringify({
      id: "r1",
      model: json.model,
      content: `echo: ${json.messages?.[0]?.content ?? ""}`,
      usage: { input_tokens: 7, output_tokens: 3 },
    });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(reply);
  });
  return { server, hits };
}

export default [
  {
    name: "python llm calls: http_client() plain + streamed + refused, replayed after an approval",
    agents: [{ id: "py-llm", kind: "llm", policy: POLICY }],
    timeoutMs: 120_000,
    async run(w) {
      const { server, hits } = fakeProvider();
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      w.cleanups.push(async () => server.close());
      await w.startAgent("py-llm", { LLM_URL: `http://127.0.0.1:${server.address().port}` });

      const created = await w.client.create("py-llm", { prompt: "hello" });
      await waitForStatus(w.client, created.id, "blocked");
      assert.equal(hits.length, 2, "first dispatch: one plain + one streamed provider call");
      const approval = await waitFor(
        async () => (await w.client.listApprovals()).find((a) => a.executionId === created.id),
        { what: "the confirm approval" },
      );
      await w.client.grantApproval(approval.id, { decidedBy: "ops" });
      const ex = await waitForStatus(w.client, created.id, "completed");
      assert.equal(hits.length, 2, "the second dispatch replayed both LLM calls from the kernel");
      const out = plain(ex.output);
      assert.deepEqual(out.plain, {
        status: 200,
        json: {
          id: "r1",
          model: "fake-1",
          content: "echo: hello",
          usage: { input_tokens: 7, output_tokens: 3 },
        },
        content_type: "application/json",
      });
      assert.deepEqual(out.stream, { status: 200, text: SSE_CHUNKS.join("") });
      assert.equal(out.refused.status, 403);
      assert.deepEqual(out.refused.json, {
        error: { type: "rebuno_refusal", message: "rebuno_refusal: denied reason=no forbidden models" },
      });
      assert.equal(out.confirm, "confirmed hello");

      const steps = await w.client.listSteps(ex.id);
      const llm = steps.filter((s) => s.kind === "llm_call");
      assert.equal(llm.length, 3);
      const plainStep = llm.find((s) => s.target === "fake-1" && !plain(s.args).stream);
      const streamStep = llm.find((s) => s.target === "fake-1" && plain(s.args).stream === true);
      const refusedStep = llm.find((s) => s.target === "forbidden-model");
      assert.deepEqual(plain(plainStep.args), {
        model: "fake-1",
        messages: [{ role: "user", content: "hello" }],
      });
      const rec = plain(plainStep.result);
      assert.equal(rec.status, 200);
      assert.deepEqual(rec.headers, { "content-type": "application/json" });
      assert.deepEqual(JSON.parse(rec.body), out.plain.json);
      assert.deepEqual(plain(streamStep.result), {
        status: 200,
        headers: { "content-type": "text/event-stream" },
        body: SSE_CHUNKS.join(""),
      });
      assert.equal(refusedStep.status, "denied");
      assert.deepEqual(plain(refusedStep.error), {
        reason: "no forbidden models",
        rule_id: "no-forbidden-model",
      });

      const events = await allEvents(w.client, ex.id);
      const usage = events.find((e) => e.type === "step.succeeded" && e.payload.step_id === plainStep.stepId)
        ?.payload.usage;
      assert.deepEqual(usage, { input_tokens: 7, output_tokens: 3 }, "usage read from the recorded body");
      // The SDK posted live deltas for the streamed step; the kernel accepted them (204).
      const deltas = [...w.agentLog("py-llm").matchAll(/\/steps\/([0-9a-f]{64})\/stream "HTTP\/1\.1 (\d+)/g)];
      assert.ok(deltas.length >= 1, "stream deltas were published");
      for (const d of deltas) {
        assert.equal(d[1], streamStep.stepId);
        assert.equal(d[2], "204");
      }
    },
  },
];
