/** Webhook intake and agent configuration errors (no kernel needed: nothing here is accepted). */
import { webhookSignature } from "@rebuno/protocol";
import { Agent, agent, ConfigurationError, MAX_WEBHOOK_BYTES } from "@rebuno/sdk";
import { describe, expect, it } from "vitest";

const SECRET = "whsec-test-0123456789";
const options = { secret: SECRET, baseUrl: "http://127.0.0.1:9", env: {} };

function post(body: string, signature?: string, path = "/webhook"): Request {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== undefined) headers["rebuno-signature"] = signature;
  return new Request(`http://agent.local${path}`, { method: "POST", headers, body });
}

describe("Agent configuration", () => {
  it("reports the documented errors", () => {
    expect(() => new Agent("", () => 1, options)).toThrow(ConfigurationError);
    expect(() => new Agent("", () => 1, options)).toThrow(/^agentId must not be empty/);
    expect(() => new Agent("a", () => 1, { baseUrl: "http://x", env: {} })).toThrow(
      "secret required (set REBUNO_AGENT_SECRET or pass secret)",
    );
    expect(() => new Agent("a", () => 1, { secret: "s", env: {} })).toThrow(
      "baseUrl required (set REBUNO_URL or pass baseUrl)",
    );
  });

  it("falls back to the environment", () => {
    const a = new Agent("a", () => 1, { env: { REBUNO_AGENT_SECRET: "s", REBUNO_URL: "http://k:1/" } });
    expect(a.id).toBe("a");
    expect(a.webhookPath).toBe("/webhook");
  });

  it("takes the id from static id or @agent", () => {
    class Static extends Agent {
      static override id = "static-agent";
      override run() {
        return 1;
      }
    }
    @agent("decorated-agent")
    class Decorated extends Agent {
      override run() {
        return 1;
      }
    }
    expect(new Static(options).id).toBe("static-agent");
    expect(new Decorated(options).id).toBe("decorated-agent");
    class Missing extends Agent {}
    expect(() => new Missing(options)).toThrow(/agentId must not be empty/);
  });

  it("never puts the secret in errors", () => {
    expect.assertions(1);
    try {
      new Agent("a", () => 1, { secret: SECRET, env: {} });
    } catch (err) {
      expect(String(err)).not.toContain(SECRET);
    }
  });
});

describe("agent.fetch webhook intake", () => {
  const a = new Agent("hooks", () => 1, { ...options, logger: { warn() {}, error() {} } });

  it("answers 404 for other paths and 405 for other methods on the webhook path", async () => {
    expect((await a.fetch(post("{}", undefined, "/other"))).status).toBe(404);
    const get = await a.fetch(new Request("http://agent.local/webhook"));
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect((await a.fetch(new Request("http://agent.local/healthz"))).status).toBe(200);
  });

  it("answers 401 for a missing or wrong signature", async () => {
    const body = JSON.stringify({
      execution_id: "e",
      dispatch_id: "d",
      dispatch_attempt: 1,
      lease_timeout_seconds: 60,
    });
    expect((await a.fetch(post(body))).status).toBe(401);
    expect((await a.fetch(post(body, webhookSignature("other", body)))).status).toBe(401);
    expect((await a.fetch(post(body, "sha256=zz"))).status).toBe(401);
  });

  it("answers 400 for malformed payloads", async () => {
    for (const body of [
      "not json",
      "[]",
      JSON.stringify({ dispatch_id: "d", dispatch_attempt: 1 }),
      JSON.stringify({ execution_id: "e", dispatch_attempt: 1 }),
      JSON.stringify({ execution_id: "e", dispatch_id: "d", dispatch_attempt: 0 }),
      JSON.stringify({ execution_id: "e", dispatch_id: "d", dispatch_attempt: 1.5 }),
      JSON.stringify({ execution_id: "e", dispatch_id: "d", dispatch_attempt: 1, lease_timeout_seconds: -1 }),
    ]) {
      const res = await a.fetch(post(body, webhookSignature(SECRET, body)));
      expect(res.status, body).toBe(400);
    }
  });

  it("answers 413 for bodies over 1 MiB", async () => {
    const big = "x".repeat(MAX_WEBHOOK_BYTES + 1);
    expect((await a.fetch(post(big, webhookSignature(SECRET, big)))).status).toBe(413);
  });

  it("matches the path with a query string", async () => {
    const res = await a.fetch(post("{}", undefined, "/webhook?x=1"));
    expect(res.status).toBe(401);
  });
});
