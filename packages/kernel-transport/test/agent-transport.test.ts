import {
  ConflictError,
  KernelError,
  LeaseSuperseded,
  NotFoundError,
  PolicyError,
  Terminated,
  ValidationError,
} from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentTransport, createAgentTransport, TRANSPORT_VERSION } from "../src/index.js";
import { AGENT, LEASE, memoryLogger, SECRET } from "./helpers/fixtures.js";
import {
  type Action,
  EXEC_ID,
  type RouteInfo,
  STEP_ID,
  type StubKernel,
  startStubKernel,
} from "./helpers/stub-kernel.js";

let kernel: StubKernel;
let route: ((info: RouteInfo) => Action | undefined) | undefined;

beforeEach(async () => {
  route = undefined;
  kernel = await startStubKernel({ secret: SECRET, route: (info) => route?.(info) });
});
afterEach(() => kernel.close());

const LEASE_HEADERS = ["rebuno-dispatch-id", "rebuno-dispatch-attempt"] as const;

describe.each(["undici", "fetch"] as const)("AgentTransport over %s", (engine) => {
  let t: AgentTransport;
  const make = (baseUrl: string, extra: Partial<Parameters<typeof createAgentTransport>[0]> = {}) =>
    createAgentTransport({
      baseUrl,
      agentId: AGENT,
      secret: SECRET,
      logger: memoryLogger(),
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
      ...extra,
    });
  beforeEach(() => {
    t = make(kernel.url);
  });
  afterEach(() => t.close());

  it("reads carry a verified signature and no lease headers", async () => {
    const exec = await t.getExecution(EXEC_ID);
    expect(exec).toMatchObject({ id: EXEC_ID, agentId: "test-agent", status: "running", input: { q: 1 } });
    expect(await t.getPrevious(EXEC_ID)).toEqual({ turn: 1 });
    const steps = await t.listSteps(EXEC_ID);
    expect(steps[0]).toMatchObject({ stepId: STEP_ID, status: "succeeded", result: { ok: true } });
    expect(await t.getStep(EXEC_ID, STEP_ID)).toMatchObject({ stepId: STEP_ID });
    expect(kernel.requests.map((r) => `${r.method} ${r.target}`)).toEqual([
      `GET /v0/executions/${EXEC_ID}`,
      `GET /v0/executions/${EXEC_ID}/previous`,
      `GET /v0/executions/${EXEC_ID}/steps`,
      `GET /v0/executions/${EXEC_ID}/steps/${STEP_ID}`,
    ]);
    for (const r of kernel.requests) {
      expect(r.verified).toBe(true);
      expect(r.headers["rebuno-agent-id"]).toBe(AGENT);
      expect(r.body).toBe("");
      for (const h of LEASE_HEADERS) expect(r.headers[h]).toBeUndefined();
    }
  });

  it("every mutation carries the lease headers, exact JSON bodies and a verified signature", async () => {
    const decision = await t.submitStep(EXEC_ID, LEASE, {
      kind: "tool_call",
      target: "charge",
      args: { cents: 100 },
      idempotency: "at_most_once",
      resources: ["workspace"],
    });
    expect(decision).toMatchObject({ decision: "proceed", stepId: STEP_ID });
    const ack = await t.completeStep(EXEC_ID, LEASE, STEP_ID, {
      result: { ok: true },
      captures: [{ key: "workspace", generation: 5, checkpointRef: "snap-1" }],
      captureFailures: [{ key: "db", generation: 3, error: "timed out" }],
    });
    expect(ack).toEqual({ decision: "recorded" });
    await t.failStep(EXEC_ID, LEASE, STEP_ID, { error: { message: "boom" } });
    await t.heartbeat(EXEC_ID, LEASE);
    expect(await t.suspend(EXEC_ID, LEASE)).toBe(true);
    await t.publishStreamDelta(EXEC_ID, LEASE, STEP_ID, { seq: 0, data: "Hel" });
    const view = await t.registerResource(EXEC_ID, LEASE, {
      key: "workspace",
      driverId: "sandbox",
      everySteps: 2,
    });
    expect(view).toMatchObject({ key: "workspace", driverId: "sandbox", everySteps: 2, registeredSeq: 4 });
    await t.bindResource(EXEC_ID, LEASE, "workspace", { id: "sb-1" });
    await t.publishCheckpoints(EXEC_ID, LEASE, {
      captures: [{ key: "workspace", generation: 6, checkpointRef: "s2" }],
    });
    await t.completeExecution(EXEC_ID, LEASE, { output: { answer: 42 }, state: { turns: 1 } });
    await t.failExecution(EXEC_ID, LEASE, "tool_error: charge: boom");

    const base = `/v0/executions/${EXEC_ID}`;
    expect(kernel.requests.map((r) => [r.target.slice(base.length), r.body])).toEqual([
      [
        "/steps",
        '{"kind":"tool_call","target":"charge","args":{"cents":100},"idempotency":"at_most_once","resources":["workspace"]}',
      ],
      [
        `/steps/${STEP_ID}/complete`,
        '{"result":{"ok":true},"captures":[{"key":"workspace","generation":5,"checkpoint_ref":"snap-1"}],' +
          '"capture_failures":[{"key":"db","generation":3,"error":"timed out"}]}',
      ],
      [`/steps/${STEP_ID}/fail`, '{"error":{"message":"boom"}}'],
      ["/heartbeat", ""],
      ["/suspend", ""],
      [`/steps/${STEP_ID}/stream`, '{"seq":0,"data":"Hel"}'],
      ["/resources", '{"key":"workspace","driver_id":"sandbox","every_steps":2}'],
      ["/resources/workspace/binding", '{"binding":{"id":"sb-1"}}'],
      ["/resources/checkpoints", '{"captures":[{"key":"workspace","generation":6,"checkpoint_ref":"s2"}]}'],
      ["/complete", '{"output":{"answer":42},"state":{"turns":1}}'],
      ["/fail", '{"error":"tool_error: charge: boom"}'],
    ]);
    for (const r of kernel.requests) {
      expect(r.method).toBe("POST");
      expect(r.verified).toBe(true);
      expect(r.headers["rebuno-dispatch-id"]).toBe(LEASE.dispatchId);
      expect(r.headers["rebuno-dispatch-attempt"]).toBe("3");
      expect(r.headers["content-type"]).toBe(r.body === "" ? undefined : "application/json");
    }
  });

  it("sends a User-Agent with the package version, after the caller's token", async () => {
    const withUa = make(kernel.url, { userAgent: "rebuno-sdk/9.9.9" });
    await withUa.getExecution(EXEC_ID);
    await withUa.close();
    expect(kernel.requests[0]!.headers["user-agent"]).toMatch(
      new RegExp(
        `^rebuno-sdk/9\\.9\\.9 rebuno-kernel-transport/${TRANSPORT_VERSION.replace(/\./g, "\\.")} node/`,
      ),
    );
  });

  it("signs the path prefix of the base URL as part of the target", async () => {
    const prefixed = make(`${kernel.url}/gateway/rebuno/`);
    await prefixed.heartbeat(EXEC_ID, LEASE);
    await prefixed.getExecution(EXEC_ID);
    await prefixed.close();
    expect(kernel.requests.map((r) => r.target)).toEqual([
      `/gateway/rebuno/v0/executions/${EXEC_ID}/heartbeat`,
      `/gateway/rebuno/v0/executions/${EXEC_ID}`,
    ]);
    expect(kernel.requests.every((r) => r.verified)).toBe(true);
  });

  it("percent-escapes ids and keys, and signs them as sent", async () => {
    await t.getStep("exec/1", "step id/x?#'");
    await t.bindResource("exec 1", LEASE, "key.with-dots_1", { v: 1 });
    await t.completeStep("a%b", LEASE, "(s)!*", { result: null });
    await t.listSteps("e", { status: "it's done" });
    expect(kernel.requests.map((r) => r.target)).toEqual([
      "/v0/executions/exec%2F1/steps/step%20id%2Fx%3F%23%27",
      "/v0/executions/exec%201/resources/key.with-dots_1/binding",
      "/v0/executions/a%25b/steps/%28s%29%21%2A/complete",
      "/v0/executions/e/steps?status=it%27s%20done",
    ]);
    expect(kernel.requests.every((r) => r.verified)).toBe(true);
    expect(kernel.requests[2]!.body).toBe('{"result":null}');
  });

  it("refuses ids that a URL parser would collapse, without sending", async () => {
    await expect(t.getStep(EXEC_ID, "..")).rejects.toBeInstanceOf(ValidationError);
    await expect(t.bindResource(EXEC_ID, LEASE, ".", 1)).rejects.toBeInstanceOf(ValidationError);
    await expect(t.getExecution("")).rejects.toBeInstanceOf(ValidationError);
    expect(kernel.requests).toHaveLength(0);
  });

  it("maps status >= 300 through errorFromEnvelope and never follows redirects", async () => {
    const answers: Record<string, Action> = {
      heartbeat: { status: 409, json: { code: "lease_superseded", message: "dispatch lease superseded" } },
      complete: { status: 409, json: { code: "execution_terminal", message: "execution is terminal" } },
      fail: { status: 409, json: { code: "conflict", message: "conflict: awaiting approval" } },
      suspend: { status: 403, json: { code: "policy_denied", message: "nope", rule_id: "r1" } },
      previous: { status: 302, headers: { location: "/elsewhere" } },
    };
    route = (info) => answers[info.target.split("/").at(-1)!];
    await expect(t.heartbeat(EXEC_ID, LEASE)).rejects.toBeInstanceOf(LeaseSuperseded);
    await expect(t.completeExecution(EXEC_ID, LEASE, { output: 1 })).rejects.toBeInstanceOf(Terminated);
    await expect(t.failExecution(EXEC_ID, LEASE, "x")).rejects.toBeInstanceOf(ConflictError);
    await expect(t.suspend(EXEC_ID, LEASE)).rejects.toMatchObject({ name: "PolicyError", ruleId: "r1" });
    const redirect = await t.getPrevious(EXEC_ID).catch((e: unknown) => e);
    expect(redirect).toBeInstanceOf(KernelError);
    expect(redirect).toMatchObject({ status: 302 });
    expect(kernel.requests.filter((r) => r.target === "/elsewhere")).toHaveLength(0);
    expect(PolicyError.isInstance(await t.suspend(EXEC_ID, LEASE).catch((e) => e))).toBe(true);
  });

  it("getStep returns null on 404; other reads throw NotFoundError", async () => {
    route = () => ({ status: 404, json: { code: "not_found", message: "not found: step" } });
    expect(await t.getStep(EXEC_ID, STEP_ID)).toBeNull();
    await expect(t.getExecution(EXEC_ID)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("validates inputs locally before sending anything", async () => {
    await expect(
      t.submitStep(EXEC_ID, LEASE, { kind: "tool_call", target: "x", args: { n: Number.NaN } }),
    ).rejects.toThrow(/args\.n/);
    await expect(t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: new Map() })).rejects.toThrow(/result/);
    await expect(
      t.publishStreamDelta(EXEC_ID, LEASE, STEP_ID, { seq: 1, data: "é".repeat(3501) }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(t.bindResource(EXEC_ID, LEASE, "k", null)).rejects.toBeInstanceOf(ValidationError);
    await expect(t.heartbeat(EXEC_ID, { ...LEASE, attempt: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(t.heartbeat(EXEC_ID, { ...LEASE, dispatchId: "a\r\nX-Evil: 1" })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(kernel.requests).toHaveLength(0);
  });

  it("parses every decision shape; an empty outcome answer counts as recorded", async () => {
    route = (info) =>
      info.target.endsWith("/complete")
        ? { status: 204 }
        : { status: 200, json: { decision: "replay", step_id: STEP_ID, error: { message: "x" } } };
    expect(await t.submitStep(EXEC_ID, LEASE, { kind: "local", target: "t" })).toMatchObject({
      decision: "replay",
      error: { message: "x" },
    });
    expect(await t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 })).toEqual({ decision: "recorded" });
  });
});

it("reuses keep-alive connections on the undici engine", async () => {
  // undici's pool may open a second socket while the first answer is still being released, so
  // "reuse" means a small constant number of connections, not one per request.
  const t = createAgentTransport({
    baseUrl: kernel.url,
    agentId: AGENT,
    secret: SECRET,
    logger: memoryLogger(),
  });
  for (let i = 0; i < 20; i++) await t.heartbeat(EXEC_ID, LEASE);
  await t.close();
  expect(kernel.requests).toHaveLength(20);
  expect(kernel.connections()).toBeLessThanOrEqual(2);
});

it("rejects bad configuration up front", () => {
  const base = { agentId: AGENT, secret: SECRET };
  expect(() => createAgentTransport({ ...base, baseUrl: "not a url" })).toThrow(/invalid kernel base URL/);
  expect(() => createAgentTransport({ ...base, baseUrl: "http://h/?q=1" })).toThrow(/query/);
  expect(() => createAgentTransport({ ...base, baseUrl: "http://u:p@h/" })).toThrow(/credentials/);
  expect(() => createAgentTransport({ ...base, baseUrl: "unix:///sock" })).toThrow(/custom fetch/);
  expect(() => createAgentTransport({ baseUrl: "http://h", agentId: AGENT, secret: "" })).toThrow(/secret/);
  expect(() => createAgentTransport({ baseUrl: "http://h", agentId: "", secret: SECRET })).toThrow(/agentId/);
});
