// @rebuno/client against the real Go kernel (`rebuno dev`): with `protocol: "legacy"` every shared
// call works and every newer feature is a NotSupportedByKernel naming it; with the default v1
// setting a missing route is the same typed error and a Go-style agent names the setting to change.
import { Client } from "@rebuno/client";
import { ConfigurationError, NotFoundError, NotSupportedByKernel, Terminated } from "@rebuno/protocol";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startGoDev } from "../../scripts/real-kernel.mjs";

let go;
const quiet = { warn() {}, error() {}, debug() {} };
const client = (options = {}) => new Client({ baseUrl: go.url, env: {}, logger: quiet, ...options });
const ghost = "01920000-0000-7000-8000-000000000bad";

beforeAll(async () => {
  go = await startGoDev({
    agents: [
      {
        id: "client-agent",
        webhookUrl: "http://127.0.0.1:9/hook",
        secret: "s",
        policy:
          "default_action: allow\nrules:\n  - id: gate\n    priority: 1\n    when: { target: refund }\n    then: { decision: require_approval }\n",
      },
    ],
  });
});
afterAll(() => go?.stop());

const failure = (p) =>
  p.then(
    () => undefined,
    (e) => e,
  );

describe("client, protocol legacy, against rebuno dev", () => {
  test("executions: create, get, list, events, steps, cancel; a second cancel is a typed 409", async () => {
    const c = client({ protocol: "legacy" });
    const exec = await c.create("client-agent", { n: 1 });
    expect(exec.status).toBe("running");
    expect((await c.get(exec.id)).input).toEqual({ n: 1 });
    expect((await c.list({ agentId: "client-agent" })).executions.map((e) => e.id)).toContain(exec.id);
    expect((await c.events(exec.id)).map((e) => e.type).slice(0, 2)).toEqual([
      "execution.created",
      "execution.started",
    ]);
    expect(await c.listSteps(exec.id)).toEqual([]);
    await c.cancel(exec.id);
    expect((await c.waitForTerminal(exec.id, { timeoutMs: 10_000 })).status).toBe("cancelled");
    // The snapshot answers 409 `execution_terminal` (newest docs: `conflict`): Terminated, not a hang.
    const again = await failure(c.cancel(exec.id));
    expect(again).toBeInstanceOf(Terminated);
    expect(again.status).toBe(409);
  });

  test("unknown ids: NotFoundError for reads that 404, empty lists where the kernel answers null", async () => {
    const c = client({ protocol: "legacy" });
    expect(await failure(c.get(ghost))).toBeInstanceOf(NotFoundError);
    expect(await failure(c.getApproval(ghost))).toBeInstanceOf(NotFoundError);
    expect(await c.events(ghost)).toEqual([]);
    expect(await c.listSteps(ghost)).toEqual([]);
    expect(await c.listApprovals()).toEqual([]);
  });

  test("agents: reads the Go keys (ID, WebhookURL, RegisteredAt) and never hands the echoed secret back", async () => {
    const c = client({ protocol: "legacy" });
    const a = await c.registerAgent({
      id: "later",
      webhookUrl: "http://127.0.0.1:9/later",
      secret: "s3cret",
    });
    expect(a).toMatchObject({ id: "later", webhookUrl: "http://127.0.0.1:9/later" });
    expect(JSON.stringify(a)).not.toContain("s3cret");
    expect((await c.getAgent("later")).webhookUrl).toBe("http://127.0.0.1:9/later");
    expect((await c.listAgents()).map((x) => x.id).sort()).toEqual(["client-agent", "later"]);
    await c.setPolicy(
      "later",
      "rules:\n  - id: r\n    priority: 1\n    when: { target: x }\n    then: { decision: allow }\n",
    );
    await c.deleteAgent("later");
    expect(await failure(c.getAgent("later"))).toBeInstanceOf(NotFoundError);
  });

  test("every newer feature is a NotSupportedByKernel naming it, and nothing is sent", async () => {
    const c = client({ protocol: "legacy" });
    const calls = {
      sessions: () => c.create("client-agent", 1, { session: "s" }),
      "idempotency keys": () => c.create("client-agent", 1, { idempotencyKey: "k" }),
      subagents: () => c.create("client-agent", 1, { spawnedBy: { executionId: ghost, stepId: "s" } }),
      forks: () => c.fork(ghost, { atSeq: 1 }),
      "policy tests": () => c.testPolicy("client-agent"),
      "API keys": () => c.listApiKeys(),
    };
    for (const [feature, call] of Object.entries(calls)) {
      const err = await failure(call());
      expect(err).toBeInstanceOf(NotSupportedByKernel);
      expect(err.feature).toBe(feature);
    }
    expect(await failure(c.previous(ghost))).toBeInstanceOf(NotSupportedByKernel);
  });
});

describe("client, default v1 setting, against rebuno dev (the wrong setting)", () => {
  test("a missing route is NotSupportedByKernel (not a bare 404)", async () => {
    const c = client();
    for (const [feature, call] of [
      ["forks", () => c.forkPoints(ghost)],
      ["API keys", () => c.listApiKeys()],
      ["sessions", () => c.previous(ghost)],
    ]) {
      const err = await failure(call());
      expect(err).toBeInstanceOf(NotSupportedByKernel);
      expect(err.feature).toBe(feature);
      expect(err.protocol).toBe("v1");
    }
  });

  test("the first agent read fails with a ConfigurationError that names REBUNO_PROTOCOL", async () => {
    const err = await failure(client().getAgent("client-agent"));
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(err.message).toMatch(/REBUNO_PROTOCOL=legacy/);
  });
});
