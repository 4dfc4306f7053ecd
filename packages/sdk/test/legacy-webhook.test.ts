/**
 * Kernel protocol generations at the agent's webhook, chosen by configuration only (the `protocol`
 * option or REBUNO_PROTOCOL), never by what a request carries:
 * - `v1` (default) refuses a legacy webhook (no `dispatch_attempt`) with a 400 naming the setting;
 * - `legacy` accepts the Go kernel snapshot's signed `{execution_id, dispatch_id}` (unfenced, with
 *   the configured lease), refuses a v1 payload, and treats a redelivery of the same dispatch id as
 *   new once the earlier run is over (the legacy kernel redelivers a reclaimed dispatch unchanged);
 *
 * The legacy agent's kernel calls go to a loopback port with nothing listening: this file tests the
 * intake; the runs against the real Go kernel are in the real-kernel suite (verify/real-kernel/sdk.test.mjs).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigurationError, webhookSignature } from "@rebuno/protocol";
import { Agent, type AgentOptions } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";

const SECRET = "legacy-secret-0123456789abcdef";
const quiet = { warn: () => {}, error: () => {} };
const agents: Agent[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

// Exactly what the Go kernel snapshot sends (internal/dispatcher/dispatcher.go: json.Marshal of
// WebhookPayload, `Rebuno-Signature: sha256=<hex>`, `Rebuno-Execution-Id`).
function legacyWebhook(executionId: string, dispatchId: string, secret = SECRET): Request {
  const body = JSON.stringify({ execution_id: executionId, dispatch_id: dispatchId });
  return new Request("http://agent.local/webhook", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "rebuno-signature": webhookSignature(secret, body),
      "rebuno-execution-id": executionId,
    },
    body,
  });
}

function v1Webhook(executionId: string, dispatchId: string, attempt = 1): Request {
  const body = JSON.stringify({
    execution_id: executionId,
    dispatch_id: dispatchId,
    dispatch_attempt: attempt,
    lease_timeout_seconds: 60,
  });
  return new Request("http://agent.local/webhook", {
    method: "POST",
    headers: { "content-type": "application/json", "rebuno-signature": webhookSignature(SECRET, body) },
    body,
  });
}

/**
 * A loopback port where the agent's first kernel call (GET the execution) waits until `release`:
 * the run stays "in progress" for as long as the test needs. It answers nothing but a 503, so no
 * execution ever runs; the point is the intake's view of a run in progress.
 */
async function holdingKernel(): Promise<{ url: string; release: () => void; requests: string[] }> {
  const requests: string[] = [];
  const waiting: (() => void)[] = [];
  let released = false;
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const answer = () =>
      res.writeHead(503, { "content-type": "application/json" }).end('{"code":"unavailable"}');
    if (released) answer();
    else waiting.push(answer);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    release: () => {
      released = true;
      for (const w of waiting.splice(0)) w();
    },
  };
}

function makeAgent(options: Partial<AgentOptions> = {}): Agent {
  const agent = new Agent("legacy-agent", () => "ok", {
    secret: SECRET,
    baseUrl: "http://127.0.0.1:9",
    env: {},
    logger: quiet,
    kernelTimeoutMs: 2_000,
    ...options,
  });
  agents.push(agent);
  return agent;
}

describe("kernel protocol at the webhook", () => {
  it("v1 (the default) refuses a legacy webhook, naming the setting", async () => {
    const agent = makeAgent();
    expect(agent.protocol).toBe("v1");
    const res = await agent.fetch(legacyWebhook("e-1", "d-1"));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("validation_error");
    expect(body.message).toMatch(/no dispatch_attempt/);
    expect(body.message).toMatch(/`protocol` option \(or REBUNO_PROTOCOL\) to "legacy"/);
    expect(agent.rejectedWebhooks.protocol_mismatch).toBe(1);
  });

  it("takes the legacy settings as documented", () => {
    const handler = () => "ok";
    const secret = SECRET;
    const baseUrl = "http://127.0.0.1:9";
    // #region legacy-option
    const agent = new Agent("support", handler, {
      secret,
      baseUrl,
      protocol: "legacy", // or REBUNO_PROTOCOL=legacy in the environment
      legacyLeaseTimeoutSeconds: 120, // the kernel's REBUNO_DISPATCH_LEASE_TIMEOUT (default 2m)
    });
    // #endregion
    agents.push(agent);
    expect(agent.protocol).toBe("legacy");
  });

  it("is chosen by the option or REBUNO_PROTOCOL, the option first; a bad value names its source", () => {
    expect(makeAgent({ env: { REBUNO_PROTOCOL: "legacy" } }).protocol).toBe("legacy");
    expect(makeAgent({ env: { REBUNO_PROTOCOL: "legacy" }, protocol: "v1" }).protocol).toBe("v1");
    expect(() => makeAgent({ env: { REBUNO_PROTOCOL: "v2" } })).toThrow(ConfigurationError);
    expect(() => makeAgent({ env: { REBUNO_PROTOCOL: "v2" } })).toThrow(/REBUNO_PROTOCOL is "v2"/);
    expect(() => makeAgent({ protocol: "old" as "legacy" })).toThrow(/the `protocol` option is "old"/);
    expect(() => makeAgent({ protocol: "legacy", legacyLeaseTimeoutSeconds: 0 })).toThrow(
      /legacyLeaseTimeoutSeconds/,
    );
  });

  it("legacy accepts the Go kernel's signed webhook and refuses a wrong signature", async () => {
    const kernel = await holdingKernel();
    const agent = makeAgent({ protocol: "legacy", baseUrl: kernel.url });
    expect((await agent.fetch(legacyWebhook("e-1", "d-1", "other-secret"))).status).toBe(401);
    const res = await agent.fetch(legacyWebhook("e-1", "d-1"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "accepted" });
    // The run started: its first call is the read of the execution.
    const deadline = Date.now() + 10_000;
    while (kernel.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(kernel.requests[0]).toBe("GET /v0/executions/e-1");
    kernel.release();
  });

  it("legacy refuses a v1 webhook (dispatch_attempt present), naming the setting", async () => {
    const agent = makeAgent({ protocol: "legacy" });
    const res = await agent.fetch(v1Webhook("e-1", "d-1"));
    expect(res.status).toBe(400);
    const { message } = (await res.json()) as { message: string };
    expect(message).toMatch(/only a v1 kernel sends/);
    expect(message).toMatch(/to "v1"/);
    expect(agent.rejectedWebhooks.protocol_mismatch).toBe(1);
  });

  it("legacy: the same dispatch while its run is in progress is a duplicate; after it, a redelivery runs", async () => {
    const kernel = await holdingKernel();
    const agent = makeAgent({ protocol: "legacy", baseUrl: kernel.url });
    expect(await (await agent.fetch(legacyWebhook("e-2", "d-2"))).json()).toEqual({ status: "accepted" });
    expect(await (await agent.fetch(legacyWebhook("e-2", "d-2"))).json()).toEqual({ status: "duplicate" });
    kernel.release();
    await agent.join();
    // The Go kernel reclaims an expired lease and redelivers under the same dispatch id, with no
    // attempt number: remembering it as done would drop that redelivery for good.
    expect(await (await agent.fetch(legacyWebhook("e-2", "d-2"))).json()).toEqual({ status: "accepted" });
    await agent.join();
  });

  it("v1 keeps fencing: the same (dispatch, attempt) after the run is still a duplicate", async () => {
    const kernel = await holdingKernel();
    const agent = makeAgent({ baseUrl: kernel.url });
    expect(await (await agent.fetch(v1Webhook("e-3", "d-3"))).json()).toEqual({ status: "accepted" });
    kernel.release();
    await agent.join();
    expect(await (await agent.fetch(v1Webhook("e-3", "d-3"))).json()).toEqual({ status: "duplicate" });
  });
});
