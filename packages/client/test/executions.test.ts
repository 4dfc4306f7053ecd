import {
  ConfigurationError,
  ConflictError,
  ForbiddenError,
  InternalError,
  KernelError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client } from "../src/index.js";
import { type FakeKernel, startFakeKernel, wireEvent, wireExecution } from "./fake-kernel.js";
import { clientFor, quietLogger } from "./helpers.js";

const ID = "0192f1a0-0000-7000-8000-000000000000";

let kernel: FakeKernel;
beforeEach(async () => {
  kernel = await startFakeKernel();
});
afterEach(async () => {
  await kernel.close();
});

describe("construction", () => {
  it("requires a base URL, with the documented message, as a ConfigurationError", () => {
    expect(() => new Client({ env: {} })).toThrow(ConfigurationError);
    expect(() => new Client({ env: { REBUNO_URL: "  " } })).toThrow(
      "Client baseUrl is required (set REBUNO_URL or pass baseUrl)",
    );
    expect(() => new Client({ baseUrl: "not a url", env: {} })).toThrow(ConfigurationError);
    expect(() => new Client({ baseUrl: kernel.url, timeoutMs: 0, env: {} })).toThrow(ConfigurationError);
  });

  it("falls back to REBUNO_URL and REBUNO_API_KEY", async () => {
    const client = new Client({ env: { REBUNO_URL: `${kernel.url}/`, REBUNO_API_KEY: "env-key" } });
    expect(client.baseUrl).toBe(kernel.url);
    kernel.reply({ status: 200, json: wireExecution() });
    await client.get(ID);
    expect(kernel.requests[0]!.headers.authorization).toBe("Bearer env-key");
  });

  it("reads process.env when no env is passed", async () => {
    const saved = { url: process.env.REBUNO_URL, key: process.env.REBUNO_API_KEY };
    process.env.REBUNO_URL = kernel.url;
    process.env.REBUNO_API_KEY = "process-key";
    try {
      const client = new Client({ logger: quietLogger() });
      kernel.reply({ status: 200, json: wireExecution() });
      await client.get(ID);
      expect(kernel.requests[0]!.headers.authorization).toBe("Bearer process-key");
    } finally {
      if (saved.url === undefined) delete process.env.REBUNO_URL;
      else process.env.REBUNO_URL = saved.url;
      if (saved.key === undefined) delete process.env.REBUNO_API_KEY;
      else process.env.REBUNO_API_KEY = saved.key;
    }
  });

  it("prefers explicit options and sends no Authorization header without a key", async () => {
    const client = new Client({ baseUrl: kernel.url, apiKey: "", env: { REBUNO_API_KEY: "env-key" } });
    kernel.reply({ status: 200, json: wireExecution() });
    await client.get(ID);
    const req = kernel.requests[0]!;
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers["user-agent"]).toMatch(/^rebuno-client\/\d+\.\d+\.\d+ rebuno-kernel-transport\//);
  });

  it("keeps a base path prefix", async () => {
    const client = new Client({ baseUrl: `${kernel.url}/gateway/`, env: {} });
    kernel.reply({ status: 200, json: wireExecution() });
    await client.get(ID);
    expect(kernel.requests[0]!.path).toBe(`/gateway/v0/executions/${ID}`);
  });

  it("works through an injected fetch", async () => {
    const seen: string[] = [];
    const client = clientFor(kernel, {
      fetch: (request: Request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname}`);
        return fetch(request);
      },
    });
    kernel.reply({ status: 200, json: wireExecution() });
    expect((await client.get(ID)).agentId).toBe("researcher");
    expect(seen).toEqual([`GET /v0/executions/${ID}`]);
    expect(kernel.requests[0]!.headers.authorization).toBe("Bearer test-key");
  });
});

describe("create", () => {
  it("sends agent_id and input, and parses the execution", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 201, json: wireExecution({ session: "", failure_reason: null, extra: 1 }) });
    const execution = await client.create("researcher", { query: "hello" });
    const req = kernel.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/v0/executions");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers.authorization).toBe("Bearer test-key");
    expect(req.bodyText).toBe('{"agent_id":"researcher","input":{"query":"hello"}}');
    expect(execution).toEqual({
      id: ID,
      agentId: "researcher",
      input: { query: "hello" },
      status: "running",
      createdAt: "2026-07-07T12:00:00.123456789Z",
      updatedAt: "2026-07-07T12:00:03.5Z",
    });
  });

  it("leaves out undefined input and empty options, sends explicit null", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 201, json: wireExecution() }, { status: 201, json: wireExecution() });
    await client.create("a", undefined, { session: "", parentExecutionId: "", idempotencyKey: "" });
    await client.create("a", null);
    expect(kernel.requests.map((r) => r.bodyText)).toEqual([
      '{"agent_id":"a"}',
      '{"agent_id":"a","input":null}',
    ]);
  });

  it("maps every option to its wire field", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 201, json: wireExecution({ status: "pending" }) });
    const e = await client.create(
      "researcher",
      { topic: "x" },
      {
        session: "chat:1",
        parentExecutionId: "p-1",
        idempotencyKey: "req-123",
        spawnedBy: { executionId: "parent", stepId: "s".repeat(64) },
      },
    );
    expect(e.status).toBe("pending");
    expect(kernel.requests[0]!.body).toEqual({
      agent_id: "researcher",
      input: { topic: "x" },
      session: "chat:1",
      parent_execution_id: "p-1",
      idempotency_key: "req-123",
      spawned_by: { execution_id: "parent", step_id: "s".repeat(64) },
    });
  });

  it("rejects non-JSON input before sending anything", async () => {
    const client = clientFor(kernel);
    await expect(client.create("a", { n: Number.NaN })).rejects.toThrow(TypeError);
    await expect(client.create("", {})).rejects.toThrow(ValidationError);
    expect(kernel.requests).toHaveLength(0);
  });
});

describe("error mapping", () => {
  const cases: [number, object, new (...a: never[]) => Error][] = [
    [400, { code: "validation_error", message: "validation error: unknown field" }, ValidationError],
    [401, { code: "unauthorized", message: "unauthorized" }, UnauthorizedError],
    [403, { code: "forbidden", message: "forbidden" }, ForbiddenError],
    [404, { code: "not_found", message: "not found" }, NotFoundError],
    [409, { code: "conflict", message: "conflict: terminal" }, ConflictError],
    [500, { code: "internal_error", message: "boom" }, InternalError],
  ];
  for (const [status, body, cls] of cases) {
    it(`${status} ${(body as { code: string }).code} → ${cls.name}`, async () => {
      const client = clientFor(kernel, { retry: { attempts: 1 } });
      kernel.reply({ status, json: body });
      const err = await client.get(ID).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(cls);
      expect(err).toMatchObject({ status, message: (body as { message: string }).message });
    });
  }

  it("cancel of a terminal execution is a ConflictError and is not retried", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 409, json: { code: "conflict", message: "conflict: execution is terminal" } });
    await expect(client.cancel(ID)).rejects.toBeInstanceOf(ConflictError);
    expect(kernel.requests).toHaveLength(1);
    expect(kernel.requests[0]).toMatchObject({
      method: "POST",
      path: `/v0/executions/${ID}/cancel`,
      bodyText: "",
    });
  });

  it("an unknown code is a plain KernelError; a non-envelope body is classified by status", async () => {
    const client = clientFor(kernel, { retry: { attempts: 1 } });
    kernel.reply({ status: 418, json: { code: "teapot", message: "short and stout" } });
    const err = (await client.get(ID).catch((e: unknown) => e)) as KernelError;
    expect(err.constructor).toBe(KernelError);
    expect(err).toMatchObject({ code: "teapot", status: 418 });
    kernel.reply({ status: 404, text: "<html>nope</html>" });
    await expect(client.get(ID)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("a malformed 2xx body is an error, not a half-parsed model", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 200, json: { id: ID } });
    await expect(client.get(ID)).rejects.toBeInstanceOf(ValidationError);
    kernel.reply({ status: 200, json: { not: "a list" } });
    await expect(client.listSteps(ID)).rejects.toThrow("expected a JSON array");
  });
});

describe("reads", () => {
  it("escapes path ids and rejects empty ones", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 200, json: wireExecution() });
    await client.get("a/b c");
    expect(kernel.requests[0]!.path).toBe("/v0/executions/a%2Fb%20c");
    await expect(client.get("")).rejects.toBeInstanceOf(ValidationError);
  });

  it("list sends only the given filters and parses the page", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 200, json: { executions: [wireExecution()], next_cursor: "c1" } },
      { status: 200, json: { executions: null } },
    );
    const page = await client.list({ agentId: "researcher", session: "s 1", status: "completed", limit: 2 });
    expect(kernel.requests[0]!.search).toBe("?agent_id=researcher&session=s%201&status=completed&limit=2");
    expect(page.nextCursor).toBe("c1");
    expect(page.executions.map((e) => e.id)).toEqual([ID]);
    expect(await client.list()).toEqual({ executions: [] });
    expect(kernel.requests[1]!.search).toBe("");
  });

  it("listAll follows next_cursor across pages and stops on the last one", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      {
        status: 200,
        json: { executions: [wireExecution({ id: "e5" }), wireExecution({ id: "e4" })], next_cursor: "e4" },
      },
      {
        status: 200,
        json: { executions: [wireExecution({ id: "e3" }), wireExecution({ id: "e2" })], next_cursor: "e2" },
      },
      { status: 200, json: { executions: [wireExecution({ id: "e1" })] } },
    );
    const ids: string[] = [];
    for await (const e of client.listAll({ agentId: "researcher", limit: 2 })) ids.push(e.id);
    expect(ids).toEqual(["e5", "e4", "e3", "e2", "e1"]);
    expect(kernel.requests.map((r) => r.search)).toEqual([
      "?agent_id=researcher&limit=2",
      "?agent_id=researcher&cursor=e4&limit=2",
      "?agent_id=researcher&cursor=e2&limit=2",
    ]);
  });

  it("listAll fetches lazily: breaking early sends no further request", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 200, json: { executions: [wireExecution({ id: "e2" })], next_cursor: "e2" } });
    for await (const e of client.listAll()) {
      expect(e.id).toBe("e2");
      break;
    }
    expect(kernel.requests).toHaveLength(1);
  });

  it("previous returns the state, and null when there is none", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 200, json: { state: { messages: [1] } } }, { status: 200, json: { state: null } });
    expect(await client.previous(ID)).toEqual({ messages: [1] });
    expect(await client.previous(ID)).toBeNull();
    expect(kernel.requests[0]!.path).toBe(`/v0/executions/${ID}/previous`);
  });

  it("events sends limit always and after_seq only when non-zero; null is an empty list", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 200, json: [wireEvent(1), wireEvent(2)] }, { status: 200, json: null });
    const events = await client.events(ID);
    expect(events.map((e) => e.eventSeq)).toEqual([1, 2]);
    expect(events[0]).toMatchObject({
      executionId: ID,
      type: "step.executing",
      occurredAt: "2026-07-07T12:00:00Z",
    });
    expect(await client.events(ID, { afterSeq: 2, limit: 10 })).toEqual([]);
    expect(kernel.requests.map((r) => `${r.path}${r.search}`)).toEqual([
      `/v0/executions/${ID}/events?limit=100`,
      `/v0/executions/${ID}/events?limit=10&after_seq=2`,
    ]);
  });
});

describe("followEvents", () => {
  it("pages back to back, polls until terminal, then drains the log", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 200, json: [wireEvent(1), wireEvent(2)] }, // full page (limit 2): read on at once
      { status: 200, json: [wireEvent(3)] }, // short page: check the status
      { status: 200, json: wireExecution({ status: "running" }) },
      { status: 200, json: [] }, // after one poll interval
      { status: 200, json: wireExecution({ status: "completed" }) },
      { status: 200, json: [wireEvent(4, "step.succeeded")] }, // the final read after terminal
    );
    const seqs: number[] = [];
    for await (const e of client.followEvents(ID, { limit: 2, pollMs: 5 })) seqs.push(e.eventSeq);
    expect(seqs).toEqual([1, 2, 3, 4]);
    expect(kernel.requests.map((r) => `${r.method} ${r.path}${r.search}`)).toEqual([
      `GET /v0/executions/${ID}/events?limit=2`,
      `GET /v0/executions/${ID}/events?limit=2&after_seq=2`,
      `GET /v0/executions/${ID}`,
      `GET /v0/executions/${ID}/events?limit=2&after_seq=3`,
      `GET /v0/executions/${ID}`,
      `GET /v0/executions/${ID}/events?limit=2&after_seq=3`,
    ]);
  });

  it("ends without a status poll once the terminal event was read, and starts at afterSeq", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 200, json: [wireEvent(8), wireEvent(9, "execution.cancelled")] });
    const types: string[] = [];
    for await (const e of client.followEvents(ID, { afterSeq: 7 })) types.push(e.type);
    expect(types).toEqual(["step.executing", "execution.cancelled"]);
    expect(kernel.requests.map((r) => r.search)).toEqual(["?limit=100&after_seq=7"]);
  });

  it("ends quietly when the signal aborts while waiting", async () => {
    const client = clientFor(kernel);
    kernel.reply({ status: 200, json: [] }, { status: 200, json: wireExecution() });
    const controller = new AbortController();
    const seen: number[] = [];
    setTimeout(() => controller.abort(), 50);
    for await (const e of client.followEvents(ID, { pollMs: 10_000, signal: controller.signal }))
      seen.push(e.eventSeq);
    expect(seen).toEqual([]);
  });
});

describe("waitForTerminal", () => {
  it("polls until a terminal status when the kernel has no stream", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      { status: 404, json: { code: "not_found", message: "no such route" } }, // GET …/stream
      { status: 200, json: wireExecution({ status: "pending" }) },
      { status: 200, json: wireExecution({ status: "blocked" }) },
      { status: 200, json: wireExecution({ status: "failed", failure_reason: "dispatch_exhausted" }) },
    );
    const e = await client.waitForTerminal(ID, { pollMs: 5 });
    expect(e).toMatchObject({ status: "failed", failureReason: "dispatch_exhausted" });
    expect(kernel.requests.map((r) => r.path)).toEqual([
      `/v0/executions/${ID}/stream`,
      `/v0/executions/${ID}`,
      `/v0/executions/${ID}`,
      `/v0/executions/${ID}`,
    ]);
  });

  it("wakes on the stream's terminal notice instead of waiting for the next poll", async () => {
    const client = clientFor(kernel);
    kernel.reply(
      {
        status: 200,
        chunks: [`event: execution.terminal\ndata: {"execution_id":"${ID}","status":"completed"}\n\n`],
        gapMs: 20,
        keepOpen: true,
      },
      { status: 200, json: wireExecution({ status: "running" }) },
      { status: 200, json: wireExecution({ status: "completed", output: 7 }) },
    );
    // A 10-minute poll: only the notice can end the wait within the test's time limit.
    const e = await client.waitForTerminal(ID, { pollMs: 600_000 });
    expect(e).toMatchObject({ status: "completed", output: 7 });
  });

  it("the legacy protocol polls without opening a stream (its stream has no terminal notice)", async () => {
    const client = clientFor(kernel, { protocol: "legacy" });
    kernel.reply(
      { status: 200, json: wireExecution({ status: "running" }) },
      { status: 200, json: wireExecution({ status: "completed" }) },
    );
    expect((await client.waitForTerminal(ID, { pollMs: 5 })).status).toBe("completed");
    expect(kernel.requests.map((r) => r.path)).toEqual([`/v0/executions/${ID}`, `/v0/executions/${ID}`]);
  });

  it("times out with a TimeoutError naming the last status", async () => {
    const client = clientFor(kernel);
    for (let i = 0; i < 50; i++) kernel.reply({ status: 200, json: wireExecution({ status: "running" }) });
    const err = await client.waitForTerminal(ID, { pollMs: 10, timeoutMs: 40 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "TimeoutError", details: { executionId: ID, lastStatus: "running" } });
    expect((err as Error).message).toContain("last status: running");
  });

  it("rejects with the abort reason", async () => {
    const client = clientFor(kernel);
    for (let i = 0; i < 5; i++) kernel.reply({ status: 200, json: wireExecution() });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 30);
    await expect(client.waitForTerminal(ID, { pollMs: 10_000, signal: controller.signal })).rejects.toThrow(
      "stop",
    );
  });
});
