/**
 * The messages docs/troubleshooting.md quotes, produced for real: clock skew between agent and
 * kernel, a wrong agent secret seen from both sides. Agent and kernel talk over loopback HTTP.
 */
import { randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

interface Captured {
  readonly lines: string[];
  readonly logger: { warn: (m: string, f?: unknown) => void; error: (m: string, f?: unknown) => void };
}

function capture(): Captured {
  const lines: string[] = [];
  // The message and its fields (the error travels in the fields), as a log sink would write them.
  const write = (m: string, f?: unknown) => void lines.push(`${m} ${inspect(f, { depth: 4 })}`);
  return { lines, logger: { warn: write, error: write } };
}

async function until(check: () => boolean | Promise<boolean>, what: string | (() => string)): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
}

async function setUp(kernelOptions: Parameters<typeof startDevKernel>[0], registeredSecret?: string) {
  const kernel: DevKernel = await startDevKernel({
    ...kernelOptions,
    dispatch: { maxAttempts: 1, backoffBaseMs: 10 },
  });
  stops.push(() => kernel.close());
  const baseUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const secret = randomBytes(16).toString("hex");
  const log = capture();
  const agent = new Agent("doc-agent", async () => "done", { secret, baseUrl, logger: log.logger });
  const server = await agent.serve({ host: "127.0.0.1", port: 0 });
  stops.push(() => server.close());
  kernel.registerAgent({ id: "doc-agent", webhookUrl: server.url, secret: registeredSecret ?? secret });
  const client = new Client({ baseUrl });
  stops.push(() => client.close());
  return { kernel, client, log };
}

describe("docs/troubleshooting.md messages", () => {
  it("clock skew: 401 request timestamp outside the allowed window, with the REBUNO_PROTOCOL hint", async () => {
    // The kernel's clock runs ten minutes ahead of the agent's.
    const { client, log } = await setUp({ clock: () => Date.now() + 600_000 });
    await client.create("doc-agent", {});
    await until(
      () => log.lines.some((l) => l.includes("request timestamp outside the allowed window")),
      () => `the skew refusal in the agent's log (got: ${JSON.stringify(log.lines)})`,
    );
    const line = log.lines.find((l) => l.includes("request timestamp outside the allowed window")) ?? "";
    expect(line).toContain("set REBUNO_PROTOCOL=legacy");
  });

  it("wrong secret: the agent logs bad_signature with its hint; the kernel records the failed delivery", async () => {
    const { client, log } = await setUp({}, "not-the-agents-secret");
    const { id } = await client.create("doc-agent", {});
    await until(() => log.lines.some((l) => l.includes("bad_signature")), "the refusal in the agent's log");
    expect(log.lines.find((l) => l.includes("bad_signature"))).toContain(
      "refused a webhook request: bad_signature (401): bad webhook signature; check that the agent's secret (REBUNO_AGENT_SECRET)",
    );
    await until(async () => (await client.get(id)).status === "failed", "dispatch_exhausted");
    expect((await client.get(id)).failureReason).toBe("dispatch_exhausted");
    const failed = (await client.events(id, { limit: 1000 })).find((e) => e.type === "dispatch.failed");
    expect(failed?.payload).toMatchObject({
      error_class: "http_status",
      error:
        "agent answered HTTP 401 (the agent refused the webhook signature: check that its secret matches the registered one)",
    });
  });
});
