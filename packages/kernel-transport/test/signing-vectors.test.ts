/**
 * The shared v1 signature vectors, reproduced by what the transport actually puts on the wire for
 * a fixed clock: the stub server records the request line, headers and body bytes it received.
 */

import { loadVector } from "@rebuno/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentSigner, createAgentTransport, createHttpCore, type DispatchLease } from "../src/index.js";
import { memoryLogger } from "./helpers/fixtures.js";
import { type StubKernel, startStubKernel } from "./helpers/stub-kernel.js";

interface Vector {
  name: string;
  secret: string;
  agent_id?: string;
  method: string;
  target: string;
  timestamp: string;
  dispatch_id: string;
  dispatch_attempt: string;
  body: string;
  signature: string;
}

const vectors = loadVector<{ vectors: Vector[] }>("request_signature_vectors").vectors;
const byName = (name: string) => vectors.find((v) => v.name === name)!;
const fixedClock = (v: Vector) => () => Number(v.timestamp) * 1000 + 999; // whole seconds are signed

function leaseOf(v: Vector): DispatchLease {
  return { dispatchId: v.dispatch_id, attempt: Number(v.dispatch_attempt), timeoutMs: 120_000 };
}

let kernel: StubKernel;
beforeEach(async () => {
  kernel = await startStubKernel({ secret: "test-secret" });
});
afterEach(() => kernel.close());

function expectWire(v: Vector) {
  expect(kernel.requests).toHaveLength(1);
  const seen = kernel.requests[0]!;
  expect(seen.method).toBe(v.method);
  expect(seen.target).toBe(v.target);
  expect(seen.body).toBe(v.body);
  expect(seen.timestamp).toBe(v.timestamp);
  expect(seen.signature).toBe(v.signature);
  expect(seen.headers["rebuno-dispatch-id"]).toBe(v.dispatch_id || undefined);
  expect(seen.headers["rebuno-dispatch-attempt"]).toBe(v.dispatch_attempt || undefined);
  expect(seen.verified).toBe(true);
}

describe.each(["undici", "fetch"] as const)("signature vectors over the %s engine", (engine) => {
  const make = (v: Vector, baseUrl = kernel.url) =>
    createAgentTransport({
      baseUrl,
      agentId: v.agent_id ?? "test-agent",
      secret: v.secret,
      clock: fixedClock(v),
      logger: memoryLogger(),
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
    });

  it("docs example: step submission", async () => {
    const v = byName("docs example: step submission");
    const t = make(v);
    expect(t.engine).toBe(engine);
    await t.submitStep("018f3a2b-4c5d-7e6f-8a9b-0c1d2e3f4a5b", leaseOf(v), {
      kind: "tool_call",
      target: "send_email",
      args: { to: "ops@example.com" },
      idempotency: "safe_to_retry",
    });
    expectWire(v);
    expect(kernel.requests[0]!.headers["rebuno-agent-id"]).toBe("test-agent");
    await t.close();
  });

  it("empty read", async () => {
    const v = byName("empty read");
    const t = make(v);
    await t.getExecution("alpha");
    expectWire(v);
    await t.close();
  });

  it("heartbeat", async () => {
    const v = byName("heartbeat");
    const t = make(v);
    await t.heartbeat("alpha", leaseOf(v));
    expectWire(v);
    await t.close();
  });

  it("read with query string, no lease headers", async () => {
    const v = byName("read with query string, no lease headers");
    const t = make(v);
    await t.listSteps("018f3a2b-4c5d-7e6f-8a9b-0c1d2e3f4a5b", { status: "terminal" });
    expectWire(v);
    await t.close();
  });

  it("suspend (empty body, lease headers)", async () => {
    const v = byName("suspend (empty body, lease headers)");
    const t = make(v);
    await t.suspend("018f3a2b-4c5d-7e6f-8a9b-0c1d2e3f4a5b", leaseOf(v));
    expectWire(v);
    await t.close();
  });

  it("escaped target and unicode body, through a path-prefixed base URL", async () => {
    // No agent route has this query/body shape, so the transport's signer and HTTP core are used
    // directly: the same two pieces every AgentTransport call goes through.
    const v = byName("escaped target and unicode body");
    const sign = createAgentSigner({ agentId: "test-agent", secret: v.secret, clock: fixedClock(v) });
    const core = createHttpCore({
      baseUrl: `${kernel.url}/prefix/`,
      logger: memoryLogger(),
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
    });
    await core.request({
      method: "POST",
      path: "/v0/executions/alpha%2Fbeta/steps?x=a%20b&x=%2F",
      body: v.body,
      attemptHeaders: (ctx) => sign(ctx, leaseOf(v)),
    });
    expectWire(v);
    await core.close();
  });
});

it("every shared vector is covered above", () => {
  expect(vectors.map((v) => v.name).sort()).toEqual(
    [
      "docs example: step submission",
      "empty read",
      "escaped target and unicode body",
      "heartbeat",
      "read with query string, no lease headers",
      "suspend (empty body, lease headers)",
    ].sort(),
  );
});
