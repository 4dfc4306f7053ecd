/** `new Client({ baseUrl, apiKey, timeout })`, the official SDK's constructor, against the dev kernel. */
import { createServer, type Server } from "node:http";
import { Client } from "@rebuno/client";
import { startDevKernel } from "@rebuno/dev-kernel";
import { APIError, ConfigurationError, TimeoutError } from "@rebuno/protocol";
import { afterEach, describe, expect, it } from "vitest";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe("Client constructor options of the official SDK", () => {
  it("baseUrl + apiKey + timeout talk to the dev kernel; a bad key is an APIError with statusCode 401", async () => {
    const kernel = await startDevKernel({ bootstrapToken: "tok" });
    cleanup.push(() => kernel.close());
    const baseUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
    kernel.registerAgent({ id: "a", webhookUrl: "http://127.0.0.1:9/webhook", secret: "s" });
    const client = new Client({ baseUrl, apiKey: "tok", timeout: 10_000 });
    cleanup.push(() => client.close());
    const created = await client.create("a", { x: 1 });
    expect((await client.get(created.id)).id).toBe(created.id);

    const wrong = new Client({ baseUrl, apiKey: "not-the-token", timeout: 10_000 });
    cleanup.push(() => wrong.close());
    const error = await wrong.get(created.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).statusCode).toBe(401);
  });

  it("timeout (ms) bounds each request like timeoutMs", async () => {
    // A server that accepts and never answers.
    const server: Server = createServer(() => {});
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanup.push(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    const { port } = server.address() as { port: number };
    const client = new Client({ baseUrl: `http://127.0.0.1:${port}`, timeout: 200, retry: { attempts: 1 } });
    cleanup.push(() => client.close());
    await expect(client.get("e1")).rejects.toBeInstanceOf(TimeoutError);
  });

  it("timeout and timeoutMs together are refused", () => {
    expect(() => new Client({ baseUrl: "http://127.0.0.1:9", timeout: 1, timeoutMs: 2 })).toThrow(
      ConfigurationError,
    );
  });
});
