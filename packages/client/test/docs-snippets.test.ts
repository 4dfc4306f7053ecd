/**
 * Every TypeScript block of docs/client.md is a `// #region` of this file (checked by
 * `pnpm check:snippets`), and every region runs here against the loopback fake kernel.
 */
import { ConflictError, NotFoundError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Client, type StreamDelta } from "../src/index.js";
import { type FakeKernel, startFakeKernel, wireEvent, wireExecution } from "./fake-kernel.js";
import { quietLogger } from "./helpers.js";

const ID = "0192f1a0-0000-7000-8000-000000000000";

let kernel: FakeKernel;
let saved: { url: string | undefined; key: string | undefined };
beforeEach(async () => {
  kernel = await startFakeKernel();
  saved = { url: process.env.REBUNO_URL, key: process.env.REBUNO_API_KEY };
  process.env.REBUNO_URL = kernel.url;
  process.env.REBUNO_API_KEY = "docs-token";
});
afterEach(async () => {
  await kernel.close();
  if (saved.url === undefined) delete process.env.REBUNO_URL;
  else process.env.REBUNO_URL = saved.url;
  if (saved.key === undefined) delete process.env.REBUNO_API_KEY;
  else process.env.REBUNO_API_KEY = saved.key;
});

describe("docs/client.md snippets", () => {
  it("construct", async () => {
    const kernelUrl = kernel.url;
    // #region construct
    // Reads REBUNO_URL and REBUNO_API_KEY when the options are not given.
    const fromEnv = new Client();
    // Or explicitly; `fetch` could route requests to an in-process dev kernel instead.
    const explicit = new Client({ baseUrl: kernelUrl, apiKey: "my-token", timeoutMs: 10_000 });
    // #endregion
    expect(fromEnv.baseUrl).toBe(kernel.url);
    expect(explicit.baseUrl).toBe(kernel.url);
  });

  it("create-and-wait", async () => {
    const client = new Client({ logger: quietLogger() });
    const info = vi.spyOn(console, "info").mockImplementation(() => undefined);
    kernel.reply(
      { status: 201, json: wireExecution() },
      // waitForTerminal first subscribes to the execution's stream; this fake kernel has none.
      { status: 404, json: { code: "not_found", message: "no stream here" } },
      { status: 200, json: wireExecution({ status: "completed", output: { answer: "42" } }) },
    );
    // #region create-and-wait
    const execution = await client.create("researcher", { query: "hello" }, { idempotencyKey: "req-123" });
    const finished = await client.waitForTerminal(execution.id, { timeoutMs: 60_000 });
    if (finished.status === "completed") {
      console.info("answer:", finished.output);
    } else {
      console.warn(`execution ${finished.status}: ${finished.failureReason}`);
    }
    // #endregion
    expect(finished.output).toEqual({ answer: "42" });
    expect(info).toHaveBeenCalledWith("answer:", { answer: "42" });
    expect(kernel.requests[0]!.body).toMatchObject({ idempotency_key: "req-123" });
  });

  it("follow-events", async () => {
    const client = new Client();
    const executionId = ID;
    kernel.reply({
      status: 200,
      json: [wireEvent(1, "step.executing"), wireEvent(2, "execution.completed")],
    });
    const seen: string[] = [];
    // #region follow-events
    for await (const event of client.followEvents(executionId, { pollMs: 250 })) {
      seen.push(`${event.eventSeq} ${event.type}`);
    }
    // The loop ends once the execution is terminal and every event was read.
    // #endregion
    expect(seen).toEqual(["1 step.executing", "2 execution.completed"]);
  });

  it("stream", async () => {
    const client = new Client();
    const executionId = ID;
    const frame = (seq: number, data: string) => `data: ${JSON.stringify({ step_id: "s1", seq, data })}\n\n`;
    kernel.reply({ status: 200, chunks: [frame(0, "Hel"), ": keep-alive\n\n", frame(2, "lo")] });
    let text = "";
    const gaps: StreamDelta[] = [];
    // #region stream
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60_000); // stop listening after a minute
    for await (const delta of client.stream(executionId, { signal: controller.signal })) {
      if (delta.gap) gaps.push(delta); // `delta.gap.missed` deltas of this step never arrived
      text += delta.data;
    }
    controller.abort();
    // #endregion
    expect(text).toBe("Hello");
    expect(gaps.map((g) => g.gap)).toEqual([{ expectedSeq: 1, missed: 1 }]);
  });

  it("list-all", async () => {
    const client = new Client();
    kernel.reply(
      {
        status: 200,
        json: { executions: [wireExecution({ id: "e2", status: "failed" })], next_cursor: "e2" },
      },
      { status: 200, json: { executions: [wireExecution({ id: "e1", status: "failed" })] } },
    );
    const failed: string[] = [];
    // #region list-all
    for await (const execution of client.listAll({ agentId: "researcher", status: "failed", limit: 100 })) {
      failed.push(execution.id);
    }
    // #endregion
    expect(failed).toEqual(["e2", "e1"]);
  });

  it("approvals", async () => {
    const client = new Client();
    kernel.reply(
      {
        status: 200,
        json: [
          {
            id: "ap1",
            step_id: "s1",
            execution_id: ID,
            status: "pending",
            approvers: ["alice"],
            timeout_at: "2026-07-07T12:05:00Z",
            created_at: "2026-07-07T12:00:00Z",
          },
        ],
      },
      { status: 204 },
    );
    // #region approvals
    for (const approval of await client.listApprovals()) {
      if (approval.approvers.length === 0 || approval.approvers.includes("alice")) {
        await client.grantApproval(approval.id, { decidedBy: "alice", rationale: "reviewed" });
      }
    }
    // #endregion
    expect(kernel.requests[1]!.path).toBe("/v0/approvals/ap1/grant");
  });

  it("errors", async () => {
    const client = new Client();
    const executionId = ID;
    kernel.reply({ status: 409, json: { code: "conflict", message: "conflict: execution is terminal" } });
    let note = "";
    // #region errors
    try {
      await client.cancel(executionId);
    } catch (err) {
      if (err instanceof ConflictError) note = "already finished";
      else if (err instanceof NotFoundError) note = "no such execution";
      else throw err;
    }
    // #endregion
    expect(note).toBe("already finished");
  });

  it("admin", async () => {
    const client = new Client();
    kernel.reply(
      {
        status: 201,
        json: {
          id: "researcher",
          webhook_url: "http://127.0.0.1:5001/webhook",
          registered_at: "2026-07-07T11:00:00Z",
        },
      },
      { status: 204 },
      {
        status: 201,
        json: {
          id: "k1",
          name: "dashboard",
          scopes: ["executions:read"],
          created_at: "2026-07-07T11:00:00Z",
          token: "t",
        },
      },
    );
    // #region admin
    await client.registerAgent({
      id: "researcher",
      webhookUrl: "http://127.0.0.1:5001/webhook",
      secret: "researcher-secret",
    });
    await client.setPolicy("researcher", "default_action: allow\nrules: []\n");
    const key = await client.createApiKey({
      name: "dashboard",
      scopes: ["executions:read", "approvals:read"],
    });
    // key.token is shown only this once: store it now.
    // #endregion
    expect(key.token).toBe("t");
    expect(kernel.requests.map((r) => r.path)).toEqual([
      "/v0/agents",
      "/v0/policies/researcher",
      "/v0/api-keys",
    ]);
  });
});
