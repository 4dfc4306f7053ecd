// The client's kernel-generation setting (`protocol` / REBUNO_PROTOCOL), against the real dev
// kernel: the legacy generation refuses newer features with NotSupportedByKernel before sending,
// and reads the Go kernel's agent keys. (The same client against the real Go kernel is exercised
// by the real-kernel suite.)
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { ConfigurationError, NotSupportedByKernel } from "@rebuno/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFromGo, isMissingRoute } from "../src/generation.js";
import { Client, type ClientOptions } from "../src/index.js";
import { quietLogger } from "./helpers.js";

let kernel: DevKernel;
let url: string;

beforeAll(async () => {
  kernel = await startDevKernel({
    agents: [{ id: "gen-agent", webhookUrl: "http://127.0.0.1:9/hook", secret: "s" }],
    devMode: true,
    onError: () => {},
  });
  url = await kernel.listen();
});
afterAll(() => kernel.close());

const client = (options: ClientOptions = {}) =>
  new Client({ baseUrl: url, env: {}, logger: quietLogger(), retry: { baseMs: 1, maxMs: 5 }, ...options });

async function refusal(p: Promise<unknown>): Promise<NotSupportedByKernel> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotSupportedByKernel);
  return err as NotSupportedByKernel;
}

describe("protocol setting", () => {
  it("defaults to v1, reads REBUNO_PROTOCOL, and the option wins over the environment", () => {
    expect(client().protocol).toBe("v1");
    expect(client({ env: { REBUNO_PROTOCOL: "legacy" } }).protocol).toBe("legacy");
    expect(client({ env: { REBUNO_PROTOCOL: "legacy" }, protocol: "v1" }).protocol).toBe("v1");
  });

  it("an unknown generation is a ConfigurationError naming the setting", () => {
    expect(() => client({ env: { REBUNO_PROTOCOL: "v0" } })).toThrow(ConfigurationError);
    expect(() => client({ env: { REBUNO_PROTOCOL: "v0" } })).toThrow(/REBUNO_PROTOCOL/);
    expect(() => client({ protocol: "v2" as never })).toThrow(/`protocol` option/);
  });
});

describe("legacy generation against the dev kernel", () => {
  it("runs the shared calls: create, get, events, steps, approvals, agents, cancel", async () => {
    const c = client({ protocol: "legacy" });
    const exec = await c.create("gen-agent", { n: 1 });
    expect((await c.get(exec.id)).agentId).toBe("gen-agent");
    expect((await c.events(exec.id)).map((e) => e.type).slice(0, 2)).toEqual([
      "execution.created",
      "execution.started",
    ]);
    expect(await c.listSteps(exec.id)).toEqual([]);
    expect(Array.isArray(await c.listApprovals())).toBe(true);
    expect((await c.getAgent("gen-agent")).id).toBe("gen-agent");
    await c.cancel(exec.id);
    expect((await c.get(exec.id)).status).toBe("cancelled");
  });

  it("refuses each newer feature before sending, naming it", async () => {
    const c = client({ protocol: "legacy" });
    const before = (await c.list({ agentId: "gen-agent" })).executions.length;
    const cases: Array<[string, () => Promise<unknown>]> = [
      ["sessions", () => c.create("gen-agent", 1, { session: "s" })],
      [
        "sessions",
        () => c.create("gen-agent", 1, { parentExecutionId: "01920000-0000-7000-8000-000000000001" }),
      ],
      ["idempotency keys", () => c.create("gen-agent", 1, { idempotencyKey: "k" })],
      [
        "subagents",
        () =>
          c.create("gen-agent", 1, {
            spawnedBy: { executionId: "01920000-0000-7000-8000-000000000001", stepId: "s" },
          }),
      ],
      ["sessions", () => c.list({ session: "s" })],
      ["sessions", () => c.previous("01920000-0000-7000-8000-000000000001")],
      ["forks", () => c.fork("01920000-0000-7000-8000-000000000001", { atSeq: 1 })],
      ["forks", () => c.forkPoints("01920000-0000-7000-8000-000000000001")],
      ["policy tests", () => c.testPolicy("gen-agent")],
      ["API keys", () => c.createApiKey({ name: "k", scopes: ["executions:read"] })],
      ["API keys", () => c.listApiKeys()],
      ["API keys", () => c.rotateApiKey("k1")],
      ["API keys", () => c.revokeApiKey("k1")],
      ["approval history listings", () => c.listApprovals({ status: "granted" })],
      [
        "per-agent lease timeouts",
        () =>
          c.registerAgent({
            id: "x",
            webhookUrl: "http://127.0.0.1:9/h",
            secret: "s",
            leaseTimeoutSeconds: 30,
          }),
      ],
    ];
    for (const [feature, call] of cases) {
      const err = await refusal(call());
      expect(err.feature).toBe(feature);
      expect(err.protocol).toBe("legacy");
      expect(err.code).toBe("not_supported_by_kernel");
      expect(err.message).toContain("REBUNO_PROTOCOL");
    }
    // Nothing was sent: no execution was created by the refused creates.
    expect((await c.list({ agentId: "gen-agent" })).executions.length).toBe(before);
  });

  it("the same calls work with the v1 setting (the refusals are the setting's, not the kernel's)", async () => {
    const c = client();
    const exec = await c.create("gen-agent", 1, { idempotencyKey: "gen-key" });
    expect((await c.create("gen-agent", 1, { idempotencyKey: "gen-key" })).id).toBe(exec.id);
    expect(await c.listApiKeys()).toEqual([]);
    await c.cancel(exec.id);
  });
});

describe("Go-style answers", () => {
  it("agentFromGo maps ID/WebhookURL/RegisteredAt/PolicyBundle and drops the echoed secret", () => {
    expect(
      agentFromGo({
        ID: "a",
        WebhookURL: "http://h/w",
        Secret: "s3cret",
        PolicyBundle: "",
        RegisteredAt: "2026-08-18T00:00:00Z",
      }),
    ).toEqual({ id: "a", webhook_url: "http://h/w", registered_at: "2026-08-18T00:00:00Z" });
    const snake = { id: "a", webhook_url: "w", registered_at: "t" };
    expect(agentFromGo(snake)).toBe(snake);
  });

  it("a missing route (plain-text 404, 405, no-route envelope) is told apart from a missing resource", async () => {
    const missing = await client()
      .getStep("01920000-0000-7000-8000-000000000001", "x")
      .catch((e: unknown) => e);
    expect(isMissingRoute(missing)).toBe(false);
    const res = await fetch(`${url}/v0/no-such-route`);
    expect(res.status).toBe(404);
    const { errorFromEnvelope } = await import("@rebuno/protocol");
    expect(isMissingRoute(errorFromEnvelope(404, await res.text()))).toBe(true);
    expect(isMissingRoute(errorFromEnvelope(404, "404 page not found\n"))).toBe(true);
    expect(isMissingRoute(errorFromEnvelope(405, ""))).toBe(true);
  });
});
