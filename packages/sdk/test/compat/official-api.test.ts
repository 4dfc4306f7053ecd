/**
 * Code written the way the official Rebuno TypeScript SDK's docs write it, run against the real dev
 * kernel over HTTP: `new Agent(id, { secret, baseUrl })` + `bind`, `serve({ host, port }, handler)`,
 * `defineTool({ inputSchema })`, `wrapMcpTools(descriptors, { call, prefix })`, `APIError` with
 * `statusCode`, `CheckpointUnavailable`, `new Client({ baseUrl, apiKey, timeout })`. The forms
 * that have no honest mapping fail with an error that names docs/migration.md.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import {
  Agent,
  APIError,
  CheckpointUnavailable,
  ConfigurationError,
  defineTool,
  execution,
  KernelError,
  NotFoundError,
  PolicyError,
  resource,
  step,
  wrapMcpTools,
} from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { describeFailure, serveInventory } from "./snippets/official-style.js";

const TOKEN = "compat-token";
const quiet = { warn: () => {}, error: () => {} };

interface Running {
  kernel: DevKernel;
  baseUrl: string;
  client: Client;
  stop: Array<() => Promise<void>>;
}

let running: Running | undefined;
afterEach(async () => {
  for (const stop of running?.stop.reverse() ?? []) await stop();
  running = undefined;
});

async function kernelUp(): Promise<Running> {
  const kernel = await startDevKernel({ bootstrapToken: TOKEN });
  const baseUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
  // The official client's constructor options, `timeout` in ms.
  const client = new Client({ baseUrl, apiKey: TOKEN, timeout: 10_000 });
  running = { kernel, baseUrl, client, stop: [() => kernel.close(), () => client.close()] };
  return running;
}

/** The official client has no wait helper: poll `get` (bounded). */
async function settle(client: Client, id: string) {
  for (let i = 0; i < 600; i++) {
    const e = await client.get(id);
    if (e.status === "completed" || e.status === "failed" || e.status === "cancelled") return e;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`execution ${id} did not settle`);
}

// A tool declared the official way: `inputSchema`, not `input`.
const lookup = defineTool({
  name: "lookup",
  description: "Look a SKU up",
  inputSchema: z.object({ sku: z.string() }),
  idempotency: "safe_to_retry",
  execute: async ({ sku }) => ({ sku, stock: sku.length }),
});

// What an MCP server answers; the official docs pass a plain descriptor list plus `call`.
const mcpCalls: Array<[string, unknown]> = [];
const listed = {
  tools: [
    {
      name: "read",
      description: "Read a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  ],
};
const call = async (name: string, args: Record<string, unknown>) => {
  mcpCalls.push([name, args]);
  return { content: [{ type: "text", text: `contents of ${String(args.path)}` }] };
};

async function handler(input: { sku: string }) {
  const [read] = wrapMcpTools(listed.tools, { call, prefix: "fs" });
  const found = await lookup({ sku: input.sku });
  const text = await read?.({ path: "/tmp/a", mode: null });
  const stamp = await step("stamp", () => "fixed");
  // The official positional form: step(name, fn, args, idempotency, resources).
  const once = await step("once", ({ n }) => n + 1, { n: 1 }, "at_most_once", []);
  return { found, text, stamp, once, agent: execution().agentId };
}

describe("code written for the official TypeScript SDK", () => {
  it("new Agent(id, { secret, baseUrl }) + bind + serve: tools, MCP and steps are recorded", async () => {
    const { kernel, baseUrl, client, stop } = await kernelUp();
    const secret = randomBytes(16).toString("hex");
    const agent = new Agent<{ sku: string }, unknown>("compat", {
      secret,
      baseUrl,
      kernelTimeout: 10_000,
      logger: quiet,
    });
    expect(agent.bind(handler)).toBe(agent);
    const server = await agent.serve({ host: "127.0.0.1", port: 0 });
    stop.push(() => server.close());
    kernel.registerAgent({ id: "compat", webhookUrl: server.url, secret });

    mcpCalls.length = 0;
    const created = await client.create("compat", { sku: "tea" });
    const done = await settle(client, created.id);
    expect(done.failureReason).toBeUndefined();
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({
      found: { sku: "tea", stock: 3 },
      text: "contents of /tmp/a",
      stamp: "fixed",
      once: 2,
      agent: "compat",
    });
    // The server is called with the bare name; nulls are stripped before recording and calling.
    expect(mcpCalls).toEqual([["read", { path: "/tmp/a" }]]);
    const steps = await client.listSteps(created.id);
    expect(steps.map((s) => [s.kind, s.target, s.idempotency]).sort()).toEqual([
      ["local", "once", "at_most_once"],
      ["local", "stamp", "safe_to_retry"],
      ["tool_call", "fs_read", "safe_to_retry"],
      ["tool_call", "lookup", "safe_to_retry"],
    ]);
    expect(steps.find((s) => s.target === "fs_read")?.args).toEqual({ path: "/tmp/a" });
  });

  it("agent.serve({ host, port }, handler) binds the handler and serves", async () => {
    const { kernel, baseUrl, client, stop } = await kernelUp();
    const secret = randomBytes(16).toString("hex");
    const agent = new Agent<{ sku: string }, unknown>("compat2", { secret, baseUrl, logger: quiet });
    const server = await agent.serve({ host: "127.0.0.1", port: 0 }, async (input) => ({
      echoed: input.sku,
    }));
    stop.push(() => server.close());
    kernel.registerAgent({ id: "compat2", webhookUrl: server.url, secret });
    const done = await settle(client, (await client.create("compat2", { sku: "mug" })).id);
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ echoed: "mug" });
  });

  it("APIError is the kernel error class and carries statusCode", async () => {
    const { client } = await kernelUp();
    const error = await client.get("00000000-0000-0000-0000-000000000000").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as APIError).statusCode).toBe(404);
    expect((error as APIError).code).toBe("not_found");
    expect(APIError).toBe(KernelError);
    // PolicyError and LeaseSuperseded are APIErrors in the official SDK too.
    expect(new PolicyError("nope")).toBeInstanceOf(APIError);
  });

  it("CheckpointUnavailable thrown by a driver's create fails the execution with its class name", async () => {
    const { kernel, baseUrl, client, stop } = await kernelUp();
    const secret = randomBytes(16).toString("hex");
    const agent = new Agent("sandboxed", { secret, baseUrl, logger: quiet });
    agent.bind(async () => {
      await resource("box", {
        driver: {
          driverId: "test-sandbox",
          create: () => {
            throw new CheckpointUnavailable("snapshot snap-1 expired", { checkpointRef: "snap-1" });
          },
          open: () => ({}),
          checkpoint: () => "snap-2",
        },
      });
      return "unreachable";
    });
    const server = await agent.serve({ host: "127.0.0.1", port: 0 });
    stop.push(() => server.close());
    kernel.registerAgent({ id: "sandboxed", webhookUrl: server.url, secret });
    const done = await settle(client, (await client.create("sandboxed", {})).id);
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe("agent_error: CheckpointUnavailable: snapshot snap-1 expired");
    const err = new CheckpointUnavailable(undefined, { checkpointRef: "r" });
    expect(err.code).toBe("checkpoint_unavailable");
    expect(err.checkpointRef).toBe("r");
  });
});

describe("the docs/migration.md snippet", () => {
  it("serves, records an at_most_once step and reports kernel errors with statusCode", async () => {
    const { kernel, baseUrl, client, stop } = await kernelUp();
    const secret = randomBytes(16).toString("hex");
    const server = await serveInventory(secret, baseUrl, 0);
    stop.push(() => server.close());
    kernel.registerAgent({ id: "inventory", webhookUrl: server.url, secret });
    const id = (await client.create("inventory", { sku: "tea" })).id;
    const done = await settle(client, id);
    expect(done.output).toEqual({ sku: "tea", stock: 3, reservation: "res-tea" });
    const reserve = (await client.listSteps(id)).find((s) => s.target === "reserve");
    expect(reserve?.idempotency).toBe("at_most_once");
    const missing = await client.get("00000000-0000-0000-0000-000000000000").catch((e: unknown) => e);
    expect(describeFailure(missing)).toBe("kernel said 404 not_found");
  });
});

describe("official forms without an honest mapping point to docs/migration.md", () => {
  const options = { secret: "s", baseUrl: "http://127.0.0.1:9" };

  it("serve() with no handler bound is refused before listening", async () => {
    const agent = new Agent("unbound", options);
    await expect(agent.serve({ host: "127.0.0.1", port: 0 })).rejects.toThrow(/docs\/migration\.md/);
    await agent.close();
  });

  it("the listTools() result object (not its .tools) is refused with a pointer", () => {
    expect(() => wrapMcpTools(listed as never, { call })).toThrow(ConfigurationError);
    expect(() => wrapMcpTools(listed as never, { call })).toThrow(/docs\/migration\.md/);
  });

  it("a descriptor list without call is refused with a pointer", () => {
    expect(() => wrapMcpTools(listed.tools, {} as never)).toThrow(/needs a call option.*migration\.md/);
  });

  it("conflicting or misplaced options are refused", async () => {
    expect(() => new Agent("x", options as never, {})).toThrow(/no third argument/);
    expect(() => new Agent("x", { ...options, kernelTimeout: 1, kernelTimeoutMs: 1 })).toThrow(/not both/);
    const agent = new Agent<{ sku: string }, unknown>("x", options);
    agent.bind(handler);
    expect(() => agent.bind(async () => 1)).toThrow(/already has a handler/);
    await agent.close();
    expect(() =>
      defineTool({
        name: "both",
        input: z.object({}),
        inputSchema: z.object({}),
        execute: () => 1,
      } as never),
    ).toThrow(/not both/);
  });
});

describe("APIError constructed the official way", () => {
  it("new APIError(message, code, statusCode) sets code, status and statusCode", () => {
    const e = new APIError("gone", "not_found", 404);
    expect(e).toBeInstanceOf(KernelError);
    expect([e.message, e.code, e.status, e.statusCode, e.retryable]).toEqual([
      "gone",
      "not_found",
      404,
      404,
      false,
    ]);
    expect(new APIError("boom", "internal_error", 503).retryable).toBe(true);
  });
});
