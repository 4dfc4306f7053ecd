/**
 * Every webhook the agent refuses leaves a trace: a rate-limited log line naming the cause (never
 * the secret, the signature or the body), a per-cause counter on `agent.rejectedWebhooks`, and a
 * call of the `onRejectedWebhook` metrics hook. Also: `agent.fetch` works with plain Web Requests
 * (no node:http objects) and never rejects.
 */
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { webhookSignature } from "@rebuno/protocol";
import { Agent, type WebhookRejection } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";

const SECRET = "rejections-secret-0123456789abcdef";

interface Logged {
  readonly message: string;
  readonly fields: Record<string, unknown> | undefined;
}

function recordingAgent(extra: Record<string, unknown> = {}) {
  const logged: Logged[] = [];
  const hooked: WebhookRejection[] = [];
  const agent = new Agent("rejecting", () => "ok", {
    secret: SECRET,
    baseUrl: "http://127.0.0.1:9",
    env: {},
    logger: { warn: (message, fields) => logged.push({ message, fields }), error: () => {} },
    onRejectedWebhook: (r) => hooked.push(r),
    ...extra,
  });
  return { agent, logged, hooked };
}

const v1Body = JSON.stringify({
  execution_id: "e-1",
  dispatch_id: "d-1",
  dispatch_attempt: 1,
  lease_timeout_seconds: 60,
});

function post(body: string | ReadableStream<Uint8Array>, headers: Record<string, string>, path = "/webhook") {
  return new Request(`http://agent.local${path}`, {
    method: "POST",
    headers,
    body,
    ...(typeof body === "string" ? {} : { duplex: "half" }),
  } as RequestInit);
}

const signed = (body: string) => ({
  "content-type": "application/json",
  "rebuno-signature": webhookSignature(SECRET, body),
});

const agents: Agent[] = [];
let kernel: DevKernel | undefined;
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await kernel?.close();
  kernel = undefined;
});

describe("webhook rejections are logged and counted", () => {
  const cases: readonly { cause: string; status: number; request: () => Request }[] = [
    { cause: "not_found", status: 404, request: () => post("{}", signed("{}"), "/other") },
    { cause: "method_not_allowed", status: 405, request: () => new Request("http://agent.local/webhook") },
    {
      cause: "unsupported_media_type",
      status: 415,
      request: () => post(v1Body, { ...signed(v1Body), "content-type": "text/plain" }),
    },
    {
      cause: "payload_too_large",
      status: 413,
      request: () => post("x".repeat(1024 * 1024 + 1), { "content-type": "application/json" }),
    },
    {
      cause: "payload_too_large",
      status: 413,
      // No Content-Length (a stream): the limit is enforced while reading.
      request: () => {
        const chunk = new Uint8Array(256 * 1024);
        let sent = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent++ < 8) controller.enqueue(chunk);
            else controller.close();
          },
        });
        return post(stream, { "content-type": "application/json" });
      },
    },
    {
      cause: "truncated_body",
      status: 400,
      request: () => {
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"execution_id":'));
            controller.error(new Error("client went away"));
          },
        });
        return post(stream, { "content-type": "application/json" });
      },
    },
    {
      cause: "missing_signature",
      status: 401,
      request: () => post(v1Body, { "content-type": "application/json" }),
    },
    {
      cause: "missing_signature",
      status: 401,
      request: () => post(v1Body, { "content-type": "application/json", "rebuno-signature": "v1=abc" }),
    },
    {
      cause: "bad_signature",
      status: 401,
      request: () =>
        post(v1Body, {
          "content-type": "application/json",
          "rebuno-signature": webhookSignature("other", v1Body),
        }),
    },
    { cause: "invalid_body", status: 400, request: () => post("not json", signed("not json")) },
    {
      cause: "invalid_body",
      status: 400,
      request: () => {
        const b = JSON.stringify({ execution_id: "e", dispatch_id: "d", dispatch_attempt: 0 });
        return post(b, signed(b));
      },
    },
    {
      cause: "protocol_mismatch",
      status: 400,
      request: () => {
        const legacy = JSON.stringify({ execution_id: "e", dispatch_id: "d" });
        return post(legacy, signed(legacy));
      },
    },
  ];

  for (const c of cases) {
    it(`${c.cause} → ${c.status}, one log line, one count, one hook call`, async () => {
      const { agent, logged, hooked } = recordingAgent();
      agents.push(agent);
      const res = await agent.fetch(c.request());
      expect(res.status).toBe(c.status);
      expect(res.headers.get("content-type")).toBe("application/json");
      const body = (await res.json()) as { code: string; message: string };
      expect(typeof body.code).toBe("string");
      expect(agent.rejectedWebhooks[c.cause as WebhookRejection["cause"]]).toBe(1);
      expect(hooked.map((h) => [h.cause, h.status])).toEqual([[c.cause, c.status]]);
      expect(logged).toHaveLength(1);
      expect(logged[0]?.message).toContain(`refused a webhook request: ${c.cause} (${c.status})`);
      expect(logged[0]?.fields).toMatchObject({ cause: c.cause, status: c.status });
      const text = JSON.stringify(logged);
      expect(text).not.toContain(SECRET);
      expect(text).not.toMatch(/sha256=[0-9a-f]/);
      expect(text).not.toContain("execution_id");
    });
  }

  it("names the setting when a v1 agent receives a legacy webhook", async () => {
    const { agent } = recordingAgent();
    agents.push(agent);
    const legacy = JSON.stringify({ execution_id: "e", dispatch_id: "d" });
    const res = await agent.fetch(post(legacy, signed(legacy)));
    const { message } = (await res.json()) as { message: string };
    expect(message).toContain("`protocol`");
    expect(message).toContain("REBUNO_PROTOCOL");
    expect(message).toContain('"legacy"');
  });

  it("points a bad signature at the secret", async () => {
    const { agent, logged } = recordingAgent();
    agents.push(agent);
    await agent.fetch(
      post(v1Body, { "content-type": "application/json", "rebuno-signature": webhookSignature("x", v1Body) }),
    );
    expect(logged[0]?.message).toContain("REBUNO_AGENT_SECRET");
  });

  it("logs the first 5 of a cause per window, then one summary; counts and hooks every one", async () => {
    const { agent, logged, hooked } = recordingAgent();
    agents.push(agent);
    for (let i = 0; i < 12; i++) {
      await agent.fetch(
        post(v1Body, {
          "content-type": "application/json",
          "rebuno-signature": webhookSignature("x", v1Body),
        }),
      );
    }
    await agent.fetch(new Request("http://agent.local/nope"));
    expect(agent.rejectedWebhooks.bad_signature).toBe(12);
    expect(agent.rejectedWebhooks.not_found).toBe(1);
    expect(hooked).toHaveLength(13);
    expect(logged.filter((l) => l.message.includes("bad_signature (401)"))).toHaveLength(5);
    expect(logged.filter((l) => l.message.includes("not_found (404)"))).toHaveLength(1);
    // The window's summary is written when it ends (here: on close).
    await agent.close();
    const summary = logged.at(-1);
    expect(summary?.message).toContain("bad_signature × 7");
    expect(summary?.fields).toEqual({ suppressed: { bad_signature: 7 } });
  });

  it("feeds a metrics counter from the hook", async () => {
    const handler = () => "ok";
    const secret = SECRET;
    const baseUrl = "http://127.0.0.1:9";
    // #region rejection-metrics
    const refused = new Map<string, number>();
    const agent = new Agent("metered", handler, {
      secret,
      baseUrl,
      // Called for every refused request (the log lines are rate-limited, this is not).
      onRejectedWebhook: (rejection) => refused.set(rejection.cause, (refused.get(rejection.cause) ?? 0) + 1),
    });
    // #endregion
    agents.push(agent);
    await agent.fetch(post("{}", { "content-type": "application/json" }));
    await agent.fetch(post("{}", { "content-type": "application/json" }));
    expect(Object.fromEntries(refused)).toEqual({ missing_signature: 2 });
    expect(agent.rejectedWebhooks.missing_signature).toBe(2);
  });

  it("a throwing hook or logger never breaks the answer", async () => {
    const agent = new Agent("fragile", () => 1, {
      secret: SECRET,
      baseUrl: "http://127.0.0.1:9",
      env: {},
      logger: {
        warn: () => {
          throw new Error("logger down");
        },
      },
      onRejectedWebhook: () => {
        throw new Error("metrics down");
      },
    });
    agents.push(agent);
    expect((await agent.fetch(post("{}", { "content-type": "application/json" }))).status).toBe(401);
  });

  it("wrong_agent: a signed delivery for another agent's execution is counted and not run", async () => {
    let runs = 0;
    const logged: Logged[] = [];
    const hooked: WebhookRejection[] = [];
    let agent!: Agent;
    kernel = await startDevKernel({ dispatch: { pollMs: 10, fetch: (request) => agent.fetch(request) } });
    const k = kernel;
    const kernelFetch: typeof fetch = (input, init) => k.fetch(new Request(input, init));
    agent = new Agent(
      "alpha",
      () => {
        runs++;
        return "ran";
      },
      {
        secret: SECRET,
        baseUrl: "http://kernel.test",
        fetch: kernelFetch,
        env: {},
        logger: { warn: (message, fields) => logged.push({ message, fields }), error: () => {} },
        onRejectedWebhook: (r) => hooked.push(r),
      },
    );
    agents.push(agent);
    kernel.registerAgent({ id: "alpha", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    // "beta" is registered with alpha's URL and secret: a copy-paste misconfiguration.
    kernel.registerAgent({ id: "beta", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    const client = new Client({ baseUrl: "http://kernel.test", fetch: kernelFetch, apiKey: "" });
    const created = await client.create("beta", {});
    const deadline = Date.now() + 10_000;
    while (hooked.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await agent.join();
    expect(hooked.map((h) => [h.cause, h.executionId])).toEqual([["wrong_agent", created.id]]);
    expect(agent.rejectedWebhooks.wrong_agent).toBe(1);
    expect(logged.some((l) => l.message.includes("belongs to another agent"))).toBe(true);
    expect(runs).toBe(0);
    expect((await client.get(created.id)).status).toBe("running");
  });
});

describe("agent.fetch with plain Web Requests", () => {
  it("accepts a signed v1 delivery built with nothing but the Web Request API", async () => {
    let agent!: Agent;
    kernel = await startDevKernel({ dispatch: { pollMs: 10, fetch: (request) => agent.fetch(request) } });
    const k = kernel;
    const kernelFetch: typeof fetch = (input, init) => k.fetch(new Request(input, init));
    agent = new Agent("plain", (input: unknown) => ({ echoed: input }), {
      secret: SECRET,
      baseUrl: "http://kernel.test",
      fetch: kernelFetch,
      env: {},
      logger: { warn: () => {}, error: () => {} },
    });
    agents.push(agent);
    kernel.registerAgent({ id: "plain", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    const client = new Client({ baseUrl: "http://kernel.test", fetch: kernelFetch, apiKey: "" });
    const created = await client.create("plain", { n: 1 });
    const done = await client.waitForTerminal(created.id, { timeoutMs: 10_000, pollMs: 10 });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ echoed: { n: 1 } });
    // #region web-request
    const health = await agent.fetch(new Request("http://agent.local/healthz"));
    // → 200 {"status":"ok"}; a POST to the webhook path with a signed body starts a run.
    // #endregion
    expect(await health.json()).toEqual({ status: "ok" });
  });
});
