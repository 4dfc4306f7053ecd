/**
 * The non-Node side of the `#engine` import (engine-web.ts), exercised on Node by loading it in
 * place of engine-node.ts: with a bare http base URL the transport then runs exactly as on Deno,
 * Bun or in a browser (the fetch engine over the global `fetch`, WebCrypto signatures), against
 * the stub kernel that verifies every signature independently.
 */
import { ConfigurationError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { bodyBytes, createDefaultEngine, RUNTIME_TOKEN } from "../src/engine-web.js";
import { createAgentTransport, createHttpCore, TRANSPORT_USER_AGENT } from "../src/index.js";
import { AGENT, LEASE, memoryLogger, SECRET } from "./helpers/fixtures.js";
import { EXEC_ID, STEP_ID, type StubKernel, startStubKernel } from "./helpers/stub-kernel.js";

vi.mock("#engine", () => import("../src/engine-web.js"));

let kernel: StubKernel;
beforeEach(async () => {
  kernel = await startStubKernel({ secret: SECRET });
});
afterEach(async () => {
  vi.unstubAllGlobals();
  await kernel.close();
});

const transport = () =>
  createAgentTransport({ baseUrl: kernel.url, agentId: AGENT, secret: SECRET, logger: memoryLogger() });

describe("engine-web.ts as the #engine", () => {
  it("a bare http base URL gets the fetch engine, not undici", () => {
    expect(createHttpCore({ baseUrl: kernel.url }).engine).toBe("fetch");
    expect(createDefaultEngine("http://127.0.0.1:1", 64).name).toBe("fetch");
    expect(transport().engine).toBe("fetch");
  });

  it("sends a runtime token it can tell (here: a web bundle run on Node)", () => {
    expect(RUNTIME_TOKEN).toBe(`node/${process.versions.node}`);
    expect(TRANSPORT_USER_AGENT).toMatch(/^rebuno-kernel-transport\/\S+ node\//);
  });

  it("body bytes: UTF-8 for strings, none for empty bodies, no Buffer needed", () => {
    expect(bodyBytes(undefined)).toBeUndefined();
    expect(bodyBytes("")).toBeUndefined();
    expect(bodyBytes(new Uint8Array())).toBeUndefined();
    const bytes = bodyBytes("é")!;
    expect(Buffer.isBuffer(bytes)).toBe(false);
    expect([...bytes]).toEqual([0xc3, 0xa9]);
  });

  it("signs every attempt with WebCrypto: the kernel verifies submit, complete and heartbeat", async () => {
    const t = transport();
    const decision = await t.submitStep(EXEC_ID, LEASE, {
      kind: "tool_call",
      target: "send_email",
      args: { to: "ops@example.com", note: "héllo 🙂" },
      idempotency: "safe_to_retry",
    });
    expect(decision).toMatchObject({ stepId: STEP_ID });
    await t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: { ok: true } });
    await t.heartbeat(EXEC_ID, LEASE);
    expect(kernel.requests.length).toBe(3);
    for (const seen of kernel.requests) {
      expect(seen.verified, `${seen.method} ${seen.target}`).toBe(true);
      expect(seen.headers["rebuno-dispatch-id"]).toBe(LEASE.dispatchId);
    }
  });

  it("retries a read with a fresh signature per attempt, as the undici engine does", async () => {
    await kernel.close();
    let n = 0;
    kernel = await startStubKernel({
      secret: SECRET,
      route: (info) =>
        info.method === "GET" && ++n === 1 ? { status: 503, json: { error: "busy" } } : undefined,
    });
    const t = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      logger: memoryLogger(),
      retry: { baseMs: 1, maxMs: 5 },
    });
    await t.getExecution(EXEC_ID);
    expect(kernel.requests.map((r) => r.verified)).toEqual([true, true]);
  });

  it("WebCrypto missing: a ConfigurationError, and nothing is sent", async () => {
    vi.stubGlobal("crypto", {});
    const t = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: "a-secret-never-imported-before",
      logger: memoryLogger(),
    });
    const err = await t.getExecution(EXEC_ID).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(kernel.requests).toHaveLength(0);
  });
});
