/** The shared HTTP core as the client package uses it: bearer calls, errors, streams. */
import { ConflictError, NetworkError, TimeoutError, toWireJson } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createHttpCore,
  escapePathSegment,
  type HttpCore,
  queryString,
  retryAfterMs,
  TRANSPORT_VERSION,
} from "../src/index.js";
import { memoryLogger } from "./helpers/fixtures.js";
import { type Action, type RouteInfo, type StubKernel, startStubKernel } from "./helpers/stub-kernel.js";

let kernel: StubKernel;
let route: ((info: RouteInfo) => Action | undefined) | undefined;
beforeEach(async () => {
  route = undefined;
  kernel = await startStubKernel({ secret: undefined, route: (i) => route?.(i) });
});
afterEach(() => kernel.close());

describe.each(["undici", "fetch"] as const)("HttpCore over %s", (engine) => {
  let core: HttpCore;
  beforeEach(() => {
    core = createHttpCore({
      baseUrl: `${kernel.url}/api`,
      headers: { authorization: "Bearer sk-test" },
      userAgent: "rebuno-client/1.0.0",
      retry: { attempts: 3, baseMs: 1, maxMs: 5 },
      logger: memoryLogger(),
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
    });
  });
  afterEach(() => core.close());

  it("sends bearer calls below the prefix and parses JSON", async () => {
    route = () => ({ status: 201, json: { id: "e1" } });
    expect(core.engine).toBe(engine);
    expect(core.target("/v0/executions")).toBe("/api/v0/executions");
    const body = await core.requestJson({ method: "POST", path: "/v0/executions", body: '{"agent_id":"a"}' });
    expect(body).toEqual({ id: "e1" });
    const seen = kernel.requests[0]!;
    expect(seen.target).toBe("/api/v0/executions");
    expect(seen.body).toBe('{"agent_id":"a"}');
    expect(seen.headers.authorization).toBe("Bearer sk-test");
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["user-agent"]).toContain(
      `rebuno-client/1.0.0 rebuno-kernel-transport/${TRANSPORT_VERSION}`,
    );
  });

  it("retries GET by default and never a POST unless asked", async () => {
    route = (i) => (i.nth === 1 ? { status: 503, text: "busy" } : { status: 200, json: [] });
    await expect(core.requestJson({ method: "GET", path: "/v0/agents" })).resolves.toEqual([]);
    await expect(core.request({ method: "POST", path: "/v0/executions/x/cancel" })).rejects.toMatchObject({
      status: 503,
    });
    await expect(
      core.request({ method: "POST", path: "/v0/approvals/x/grant", retry: "idempotent" }),
    ).resolves.toMatchObject({ status: 200 });
    expect(kernel.requests.map((r) => `${r.method} ${r.target}`)).toEqual([
      "GET /api/v0/agents",
      "GET /api/v0/agents",
      "POST /api/v0/executions/x/cancel",
      "POST /api/v0/approvals/x/grant",
      "POST /api/v0/approvals/x/grant",
    ]);
  });

  it("maps envelopes to the error family and keeps Retry-After", async () => {
    route = () => ({
      status: 409,
      json: { code: "conflict", message: "approval not pending" },
      headers: { "retry-after": "7" },
    });
    const err = await core.request({ method: "POST", path: "/x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ message: "approval not pending", status: 409 });
    expect(retryAfterMs(err)).toBe(7000);
  });

  it("reports a timeout as TimeoutError with the attempt timeout", async () => {
    route = () => ({ hang: true });
    const err = await core
      .request({ method: "POST", path: "/slow", timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/POST \/api\/slow timed out after 300 ms/);
  });

  it("opens streaming responses and maps their errors", async () => {
    route = (i) =>
      i.target.endsWith("/stream")
        ? { status: 200, text: 'data: {"seq":0}\n\n', headers: { "content-type": "text/event-stream" } }
        : { status: 404, json: { code: "not_found", message: "no such execution" } };
    const res = await core.open({ method: "GET", path: "/v0/executions/e/stream" });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(await res.text()).toBe('data: {"seq":0}\n\n');
    await expect(core.open({ method: "GET", path: "/v0/executions/missing/events" })).rejects.toMatchObject({
      name: "NotFoundError",
      status: 404,
    });
  });
});

it("a refused connection is a NetworkError whose cause is the socket error", async () => {
  const closed = await startStubKernel({ secret: undefined });
  await closed.close();
  const core = createHttpCore({ baseUrl: closed.url, retry: { attempts: 1 }, logger: memoryLogger() });
  const err = await core.request({ method: "GET", path: "/v0/health" }).catch((e: unknown) => e);
  await core.close();
  expect(err).toBeInstanceOf(NetworkError);
  expect((err as Error).cause).toBeDefined();
  expect((err as Error).message).toMatch(/GET \/v0\/health failed: .*ECONNREFUSED/);
});

it("works as documented in docs/design/transport.md §5", async () => {
  route = (i) =>
    i.target.includes("/stream")
      ? { status: 200, text: ": keep-alive\n\n", headers: { "content-type": "text/event-stream" } }
      : i.method === "POST" && i.target.endsWith("/cancel")
        ? { status: 204 }
        : { status: i.method === "POST" ? 201 : 200, json: { executions: [] } };
  const logger = memoryLogger();
  const VERSION = "1.2.3";
  const apiKey = "sk-test";
  const agentId = "researcher";
  const id = "exec/1";
  // #region http-core-usage
  const core = createHttpCore({
    baseUrl: kernel.url, // may carry a path prefix
    userAgent: `rebuno-client/${VERSION}`, // ours is appended
    headers: { authorization: `Bearer ${apiKey}` },
    retry: { attempts: 4, baseMs: 250, maxMs: 4_000 },
    logger,
  });
  const page = await core.requestJson({
    method: "GET",
    path: `/v0/executions${queryString({ agent_id: agentId })}`,
  });
  await core.request({ method: "POST", path: `/v0/executions/${escapePathSegment(id)}/cancel` }); // never retried
  const created = await core.requestJson({
    method: "POST",
    path: "/v0/executions",
    body: toWireJson({ agent_id: agentId, idempotency_key: "req-1" }),
    retry: "idempotent", // only because the create carries an idempotency key
  });
  const stream = await core.open({ method: "GET", path: `/v0/executions/${escapePathSegment(id)}/stream` });
  await stream.body?.cancel();
  await core.close();
  // #endregion
  expect(page).toEqual({ executions: [] });
  expect(created).toEqual({ executions: [] });
  expect(kernel.requests.map((r) => `${r.method} ${r.target}`)).toEqual([
    "GET /v0/executions?agent_id=researcher",
    "POST /v0/executions/exec%2F1/cancel",
    "POST /v0/executions",
    "GET /v0/executions/exec%2F1/stream",
  ]);
  expect(kernel.requests[2]!.body).toBe('{"agent_id":"researcher","idempotency_key":"req-1"}');
  expect(kernel.requests.every((r) => r.headers.authorization === "Bearer sk-test")).toBe(true);
});
