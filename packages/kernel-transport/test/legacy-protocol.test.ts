/**
 * Issue 11 item 2, transport side: `protocol: "legacy"` speaks to the older Go kernel. Requests are
 * signed `Rebuno-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>` with `Rebuno-Agent-Id` and
 * `Rebuno-Dispatch-Id` and no timestamp (checked here by an independent node:crypto verifier, as
 * the Go kernel's hmacAuthMiddleware does); fields that kernel refuses are left out; routes it
 * lacks throw NotSupportedByKernel before anything is sent; and a 401 from a kernel of the other
 * generation names the setting.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigurationError, NotSupportedByKernel, UnauthorizedError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentTransport, createAgentTransport } from "../src/index.js";
import { AGENT, LEASE, memoryLogger, SECRET } from "./helpers/fixtures.js";
import { EXEC_ID, STEP_ID, startStubKernel } from "./helpers/stub-kernel.js";

interface Seen {
  readonly method: string;
  readonly target: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** A loopback stand-in for the Go kernel's agent routes: its auth rule and its strict decoding. */
async function legacyKernel(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      seen.push({
        method: req.method ?? "",
        target: req.url ?? "",
        headers: req.headers,
        body: raw.toString("utf8"),
      });
      const send = (status: number, body?: unknown) => {
        res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
        res.end(body === undefined ? undefined : JSON.stringify(body));
      };
      const want = Buffer.from(`sha256=${createHmac("sha256", SECRET).update(raw).digest("hex")}`);
      const got = Buffer.from(String(req.headers["rebuno-signature"] ?? ""));
      if (
        req.headers["rebuno-agent-id"] !== AGENT ||
        got.length !== want.length ||
        !timingSafeEqual(got, want)
      ) {
        send(401, { code: "unauthorized", message: "unauthorized" });
        return;
      }
      const url = req.url ?? "";
      if (url.endsWith("/steps") && req.method === "POST") {
        const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
        // DisallowUnknownFields: only kind, target, args, idempotency.
        if (Object.keys(body).some((k) => !["kind", "target", "args", "idempotency"].includes(k))) {
          send(400, { code: "validation_error", message: "validation error" });
          return;
        }
        send(200, { decision: "proceed", step_id: STEP_ID });
      } else if (/\/steps\/[^/]+\/(complete|fail)$/.test(url)) send(200, { decision: "recorded" });
      else if (url.endsWith(`${EXEC_ID}/complete`)) {
        const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
        send(Object.keys(body).every((k) => k === "output") ? 204 : 400);
      } else send(204);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let kernel: Awaited<ReturnType<typeof legacyKernel>>;
let t: AgentTransport;
beforeEach(async () => {
  kernel = await legacyKernel();
  t = createAgentTransport({
    baseUrl: kernel.url,
    agentId: AGENT,
    secret: SECRET,
    protocol: "legacy",
    logger: memoryLogger(),
  });
});
afterEach(async () => {
  await t.close();
  await kernel.close();
});

describe("legacy signing and bodies", () => {
  it("signs sha256=<HMAC(body)> with agent and dispatch id, no timestamp or attempt", async () => {
    const decision = await t.submitStep(EXEC_ID, LEASE, {
      kind: "tool_call",
      target: "charge",
      args: { cents: 5 },
      idempotency: "at_most_once",
      resources: [],
    });
    expect(decision).toMatchObject({ decision: "proceed", stepId: STEP_ID });
    const sent = kernel.seen[0]!;
    expect(sent.body).toBe(
      '{"kind":"tool_call","target":"charge","args":{"cents":5},"idempotency":"at_most_once"}',
    );
    expect(sent.headers["rebuno-agent-id"]).toBe(AGENT);
    expect(sent.headers["rebuno-dispatch-id"]).toBe(LEASE.dispatchId);
    expect(sent.headers["rebuno-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(sent.headers["rebuno-timestamp"]).toBeUndefined();
    expect(sent.headers["rebuno-dispatch-attempt"]).toBeUndefined();
  });

  it("step outcomes, heartbeat, execution fail, reads: all accepted by the legacy auth rule", async () => {
    await expect(t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: { ok: 1 } })).resolves.toEqual({
      decision: "recorded",
    });
    await expect(t.failStep(EXEC_ID, LEASE, STEP_ID, { error: { message: "x" } })).resolves.toEqual({
      decision: "recorded",
    });
    await expect(t.heartbeat(EXEC_ID, LEASE)).resolves.toBeUndefined();
    await expect(t.failExecution(EXEC_ID, LEASE, "agent_error: x")).resolves.toBeUndefined();
    await expect(
      t.publishStreamDelta(EXEC_ID, LEASE, STEP_ID, { seq: 0, data: "hi" }),
    ).resolves.toBeUndefined();
    expect(kernel.seen.map((s) => s.headers["rebuno-timestamp"])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("completeExecution leaves out `state`, which the legacy kernel refuses", async () => {
    await t.completeExecution(EXEC_ID, LEASE, { output: { n: 1 }, state: { turn: 2 } });
    expect(kernel.seen[0]!.body).toBe('{"output":{"n":1}}');
  });
});

describe("routes and fields the legacy kernel lacks → NotSupportedByKernel, nothing sent", () => {
  const calls: [string, string, (t: AgentTransport) => Promise<unknown>][] = [
    ["suspend", "suspend", (t) => t.suspend(EXEC_ID, LEASE)],
    ["getPrevious", "sessions", (t) => t.getPrevious(EXEC_ID)],
    [
      "registerResource",
      "resources",
      (t) => t.registerResource(EXEC_ID, LEASE, { key: "db", driverId: "pg" }),
    ],
    ["bindResource", "resources", (t) => t.bindResource(EXEC_ID, LEASE, "db", { id: 1 })],
    ["publishCheckpoints", "resources", (t) => t.publishCheckpoints(EXEC_ID, LEASE, {})],
    [
      "submitStep with resources",
      "resources",
      (t) => t.submitStep(EXEC_ID, LEASE, { kind: "tool_call", target: "w", args: {}, resources: ["db"] }),
    ],
    [
      "completeStep with captures",
      "resources",
      (t) =>
        t.completeStep(EXEC_ID, LEASE, STEP_ID, {
          result: 1,
          captures: [{ key: "db", generation: 1, checkpointRef: "c" }],
        }),
    ],
  ];
  it.each(calls)("%s", async (_, feature, call) => {
    const err = await call(t).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotSupportedByKernel);
    expect(err).toMatchObject({ code: "not_supported_by_kernel", feature, protocol: "legacy" });
    expect((err as Error).message).toContain("REBUNO_PROTOCOL=legacy");
    expect(kernel.seen).toHaveLength(0);
  });
});

describe("the wrong setting: the first request fails naming REBUNO_PROTOCOL", () => {
  it("v1 signatures against the legacy kernel: 401 with a hint to set REBUNO_PROTOCOL=legacy", async () => {
    const v1 = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      protocol: "v1",
      logger: memoryLogger(),
    });
    try {
      const err = await v1.getExecution(EXEC_ID).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect((err as Error).message).toMatch(/REBUNO_PROTOCOL=legacy/);
      expect((err as UnauthorizedError).status).toBe(401);
    } finally {
      await v1.close();
    }
  });

  it("legacy signatures against a v1 kernel: 401 with a hint to set REBUNO_PROTOCOL=v1", async () => {
    const v1Kernel = await startStubKernel({ secret: SECRET });
    const legacy = createAgentTransport({
      baseUrl: v1Kernel.url,
      agentId: AGENT,
      secret: SECRET,
      protocol: "legacy",
      logger: memoryLogger(),
    });
    try {
      const err = await legacy.heartbeat(EXEC_ID, LEASE).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect((err as Error).message).toMatch(/REBUNO_PROTOCOL=v1/);
    } finally {
      await legacy.close();
      await v1Kernel.close();
    }
  });
});

describe("selection: option, else REBUNO_PROTOCOL, else v1", () => {
  const saved = process.env.REBUNO_PROTOCOL;
  afterEach(() => {
    if (saved === undefined) delete process.env.REBUNO_PROTOCOL;
    else process.env.REBUNO_PROTOCOL = saved;
  });

  it("REBUNO_PROTOCOL=legacy applies when no option is given", async () => {
    process.env.REBUNO_PROTOCOL = "legacy";
    const fromEnv = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      logger: memoryLogger(),
    });
    try {
      await fromEnv.heartbeat(EXEC_ID, LEASE);
      expect(kernel.seen[0]!.headers["rebuno-signature"]).toMatch(/^sha256=/);
    } finally {
      await fromEnv.close();
    }
  });

  it("a bad value is a ConfigurationError naming the setting", () => {
    process.env.REBUNO_PROTOCOL = "v2";
    expect(() => createAgentTransport({ baseUrl: kernel.url, agentId: AGENT, secret: SECRET })).toThrow(
      ConfigurationError,
    );
    expect(() => createAgentTransport({ baseUrl: kernel.url, agentId: AGENT, secret: SECRET })).toThrow(
      /REBUNO_PROTOCOL/,
    );
  });
});
