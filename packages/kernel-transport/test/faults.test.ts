/**
 * Fault injection against a real loopback server: which calls are re-sent, which never are, and
 * that every re-sent attempt is freshly signed.
 */
import {
  InternalError,
  NetworkError,
  TimeoutError,
  UnauthorizedError,
  ValidationError,
} from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentTransport, createAgentTransport, SubmissionOutcomeUnknown } from "../src/index.js";
import { AGENT, LEASE, memoryLogger, SECRET, tickingClock } from "./helpers/fixtures.js";
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
let logger: ReturnType<typeof memoryLogger>;

beforeEach(async () => {
  route = undefined;
  logger = memoryLogger();
  kernel = await startStubKernel({ secret: SECRET, route: (info) => route?.(info) });
});
afterEach(() => kernel.close());

const SUBMIT = { kind: "tool_call", target: "charge", args: { cents: 1 } } as const;
const FAST_RETRY = { attempts: 3, baseMs: 5, maxMs: 20 };
const SHORT = { timeoutMs: 300 };

/** First `n` requests to a target get `fault`, later ones the default answer. */
const firstN = (n: number, fault: Action) => (info: RouteInfo) => (info.nth <= n ? fault : undefined);

const AMBIGUOUS: [string, Action][] = [
  ["a reset after the request body was read", { reset: "after-body" }],
  ["a reset before the body was read", { reset: "before-body" }],
  ["a 503", { status: 503, text: "upstream unavailable" }],
  ["a 502", { status: 502, text: "bad gateway" }],
  ["a 504", { status: 504, text: "gateway timeout" }],
  ["a 500 internal_error", { status: 500, json: { code: "internal_error", message: "db" } }],
  ["a timeout", { hang: true }],
  ["a truncated 200 answer", { truncate: true }],
  ["a 200 that is not JSON", { status: 200, text: "<html>proxy</html>" }],
];

describe.each(["undici", "fetch"] as const)("over %s", (engine) => {
  let t: AgentTransport;
  beforeEach(() => {
    t = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      logger,
      timeoutMs: 5_000, // generous for a busy CI box; timeout tests pass a short per-call timeout
      retry: FAST_RETRY,
      clock: tickingClock(),
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
    });
  });
  afterEach(() => t.close());

  describe("submitStep is never re-sent after an ambiguous failure", () => {
    it.each(AMBIGUOUS)("%s → SubmissionOutcomeUnknown, exactly one request", async (_, fault) => {
      route = firstN(1, fault);
      const err = await t.submitStep(EXEC_ID, LEASE, SUBMIT, SHORT).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SubmissionOutcomeUnknown);
      expect(err).toMatchObject({
        retryable: false,
        executionId: EXEC_ID,
        code: "submission_outcome_unknown",
      });
      expect((err as Error).cause).toBeDefined();
      // Give a (wrong) delayed retry time to arrive before counting. At most one copy may arrive:
      // on a loaded machine the global fetch can pick a keep-alive socket the stub is closing, and
      // the request then fails (ambiguously, as far as the client can tell) before the stub reads it.
      await new Promise((r) => setTimeout(r, 60));
      expect(kernel.count("POST", "/steps")).toBeLessThanOrEqual(1);
    });
  });

  it("submitStep 4xx surfaces the mapped error, sent once", async () => {
    route = () => ({ status: 400, json: { code: "validation_error", message: "unknown resource" } });
    await expect(t.submitStep(EXEC_ID, LEASE, SUBMIT)).rejects.toBeInstanceOf(ValidationError);
    expect(kernel.count("POST", "/steps")).toBe(1);
  });

  describe("retry-safe calls are re-sent with a fresh timestamp and signature", () => {
    const calls: [string, (t: AgentTransport) => Promise<unknown>, string][] = [
      [
        "completeStep",
        (t) => t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 }),
        `/steps/${STEP_ID}/complete`,
      ],
      [
        "failStep",
        (t) => t.failStep(EXEC_ID, LEASE, STEP_ID, { error: { message: "x" } }),
        `/steps/${STEP_ID}/fail`,
      ],
      ["heartbeat", (t) => t.heartbeat(EXEC_ID, LEASE), "/heartbeat"],
      ["suspend", (t) => t.suspend(EXEC_ID, LEASE), "/suspend"],
      ["completeExecution", (t) => t.completeExecution(EXEC_ID, LEASE, { output: 1 }), `${EXEC_ID}/complete`],
      ["failExecution", (t) => t.failExecution(EXEC_ID, LEASE, "agent_error: x"), `${EXEC_ID}/fail`],
      ["getExecution", (t) => t.getExecution(EXEC_ID), EXEC_ID],
      ["bindResource", (t) => t.bindResource(EXEC_ID, LEASE, "k", 1), "/binding"],
    ];
    it.each(calls)("%s after a reset and a 503", async (_, call, suffix) => {
      let n = 0;
      route = (info) => {
        if (!info.target.endsWith(suffix)) return undefined;
        n++;
        return n === 1 ? { reset: "after-body" } : n === 2 ? { status: 503, text: "busy" } : undefined;
      };
      await call(t);
      const sent = kernel.requests.filter((r) => r.target.endsWith(suffix));
      expect(sent).toHaveLength(3);
      // Every attempt verified independently, each with its own timestamp and signature.
      expect(sent.every((r) => r.verified)).toBe(true);
      expect(new Set(sent.map((r) => r.timestamp)).size).toBe(3);
      expect(new Set(sent.map((r) => r.signature)).size).toBe(3);
      expect(sent.map((r) => r.body)).toEqual([sent[0]!.body, sent[0]!.body, sent[0]!.body]);
      expect(logger.lines.filter((l) => l.message.startsWith("retrying"))).toHaveLength(2);
    });
  });

  it("completeStep after a timeout is re-sent and succeeds", async () => {
    route = firstN(1, { hang: true });
    await expect(t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 }, SHORT)).resolves.toEqual({
      decision: "recorded",
    });
    expect(kernel.count("POST", "/complete")).toBe(2);
  });

  it("gives up after the attempt budget with the last error", async () => {
    route = () => ({ status: 503, text: "down" });
    const err = await t.heartbeat(EXEC_ID, LEASE).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503 });
    expect(kernel.count("POST", "/heartbeat")).toBe(3);
  });

  it("times out a slow answer with TimeoutError (and retries reads)", async () => {
    route = () => ({ delayMs: 20_000, next: { status: 200, json: {} } });
    const started = Date.now();
    await expect(t.getExecution(EXEC_ID, SHORT)).rejects.toBeInstanceOf(TimeoutError);
    // 3 attempts × 300 ms plus backoff; the bound only has to stay under the 20 s answer that
    // would come without the timeout, with room for a heavily loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(kernel.count("GET", EXEC_ID)).toBe(3);
  });

  it.each([
    [400, "validation_error"],
    [401, "unauthorized"],
    [403, "forbidden"],
    [404, "not_found"],
    [409, "conflict"],
    [409, "lease_superseded"],
    [422, "unprocessable"],
    [429, "too_many"],
  ])("a %i %s is never retried", async (status, code) => {
    route = () => ({ status, json: { code, message: code } });
    await expect(t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 })).rejects.toMatchObject({
      status,
      code,
    });
    await expect(t.heartbeat(EXEC_ID, LEASE)).rejects.toMatchObject({ status, code });
    expect(kernel.requests).toHaveLength(2);
  });

  it("a 500 is not retried on keyed writes either", async () => {
    route = () => ({ status: 500, json: { code: "internal_error", message: "boom" } });
    await expect(t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 })).rejects.toBeInstanceOf(
      InternalError,
    );
    expect(kernel.requests).toHaveLength(1);
  });

  it("stream deltas and checkpoints are not retried", async () => {
    route = () => ({ status: 503, text: "busy" });
    await expect(t.publishStreamDelta(EXEC_ID, LEASE, STEP_ID, { seq: 1, data: "x" })).rejects.toMatchObject({
      status: 503,
    });
    await expect(t.publishCheckpoints(EXEC_ID, LEASE, {})).rejects.toMatchObject({ status: 503 });
    expect(kernel.requests).toHaveLength(2);
  });

  it("a rejected signature is a 401 and is not retried", async () => {
    const wrong = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: "other-secret",
      logger,
      retry: FAST_RETRY,
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
    });
    await expect(wrong.heartbeat(EXEC_ID, LEASE)).rejects.toBeInstanceOf(UnauthorizedError);
    await wrong.close();
    expect(kernel.requests).toHaveLength(1);
  });
});

describe("failures that prove nothing was sent", () => {
  it("submitStep is re-sent after connection refused (injected fetch)", async () => {
    let calls = 0;
    const t = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      logger,
      retry: FAST_RETRY,
      fetch: (r) => {
        calls++;
        if (calls === 1) {
          const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
            code: "ECONNREFUSED",
          });
          return Promise.reject(new TypeError("fetch failed", { cause }));
        }
        return fetch(r);
      },
    });
    expect(await t.submitStep(EXEC_ID, LEASE, SUBMIT)).toMatchObject({ decision: "proceed" });
    expect(calls).toBe(2);
    expect(kernel.count("POST", "/steps")).toBe(1);
  });

  it("a refused connection to a closed port is a NetworkError with the cause, not an unknown outcome", async () => {
    const closed = await startStubKernel({ secret: SECRET });
    const url = closed.url;
    await closed.close();
    const t = createAgentTransport({
      baseUrl: url,
      agentId: AGENT,
      secret: SECRET,
      logger,
      retry: FAST_RETRY,
    });
    const err = await t.submitStep(EXEC_ID, LEASE, SUBMIT).catch((e: unknown) => e);
    await t.close();
    expect(err).toBeInstanceOf(NetworkError);
    expect(String((err as Error).message)).toMatch(/ECONNREFUSED/);
    expect((err as Error).cause).toBeDefined();
    expect(logger.lines.filter((l) => l.message.startsWith("retrying POST"))).toHaveLength(2);
  });
});
