// Why is my agent not running? Each failed webhook delivery is recorded in `dispatch.failed` with
// its cause, over real loopback sockets: an agent refusing the signature (401) is told apart from
// one that is down (connection refused) and one that hangs (timeout). Also: the static-assets option.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@rebuno/client";
import { ConfigurationError, type Event } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { networkFailure } from "../src/engine/dispatcher.js";
import { type DevKernel, startDevKernel } from "../src/kernel.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function agentServer(handler: (res: import("node:http").ServerResponse) => void): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => handler(res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** A loopback port with nothing listening (bound, then released). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}/`;
}

async function kernelWithAgent(
  webhookUrl: string,
  timeoutMs = 30_000,
): Promise<{ kernel: DevKernel; client: Client; url: string }> {
  const kernel = await startDevKernel({
    agents: [{ id: "a", webhookUrl, secret: "s" }],
    dispatch: { maxAttempts: 2, backoffBaseMs: 60_000, timeoutMs },
    onError: () => {},
  });
  closers.push(() => kernel.close());
  const url = await kernel.listen();
  const client = new Client({ baseUrl: url });
  closers.push(() => client.close());
  return { kernel, client, url };
}

async function firstFailure(client: Client, id: string): Promise<Event> {
  for await (const e of client.followEvents(id, { pollMs: 20, signal: AbortSignal.timeout(20_000) })) {
    if (e.type === "dispatch.failed") return e;
  }
  throw new Error("no dispatch.failed event");
}

describe("webhook delivery failures carry their cause", () => {
  test("an agent answering 401 (wrong secret): http_status 401, with a hint and the next retry", async () => {
    const { client, url } = await kernelWithAgent(await agentServer((res) => res.writeHead(401).end()));
    const e = await client.create("a", {});
    const failed = await firstFailure(client, e.id);
    expect(failed.payload).toMatchObject({
      execution_id: e.id,
      status: "failed",
      attempt: 1,
      max_attempts: 2,
      error_class: "http_status",
      http_status: 401,
    });
    expect(failed.payload.error).toContain("secret");
    expect(Date.parse(failed.payload.next_attempt_at as string)).toBeGreaterThan(
      Date.parse(failed.occurredAt),
    );
    // /metrics counts it by cause, the status code included (docs/protocol.md §13.3).
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('rebuno_dispatch_failures_total{cause="http_401"} 1');
  });

  test("an agent that is down: connection_refused, no HTTP status", async () => {
    const { client, url } = await kernelWithAgent(await closedPort());
    const e = await client.create("a", {});
    const failed = await firstFailure(client, e.id);
    expect(failed.payload).toMatchObject({ attempt: 1, error_class: "connection_refused" });
    expect(failed.payload.http_status).toBeUndefined();
    expect(failed.payload.error).toContain("is the agent running");
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('rebuno_dispatch_failures_total{cause="connection_refused"} 1');
  });

  test("an agent that never answers: timeout", async () => {
    const { client } = await kernelWithAgent(await agentServer(() => {}), 200);
    const e = await client.create("a", {});
    const failed = await firstFailure(client, e.id);
    expect(failed.payload).toMatchObject({ attempt: 1, error_class: "timeout" });
  });

  test("other network errors keep their code and message", () => {
    const err = new TypeError("fetch failed", {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND x"), { code: "ENOTFOUND" }),
    });
    expect(networkFailure(err)).toEqual({
      error_class: "network_error",
      error: "ENOTFOUND: getaddrinfo ENOTFOUND x",
    });
  });
});

describe("static assets beside the API", () => {
  test("GET / serves index.html, named files are served, the API is untouched", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rebuno-assets-"));
    writeFileSync(join(dir, "index.html"), "<!doctype html><p>hi</p>");
    writeFileSync(join(dir, "app.js"), "export {};");
    writeFileSync(join(dir, "secret.bin"), "not served");
    const kernel = await startDevKernel({ staticAssets: dir });
    closers.push(() => kernel.close());
    const url = await kernel.listen();
    const index = await fetch(`${url}/?kernel=x`);
    expect(index.headers.get("content-type")).toContain("text/html");
    expect(await index.text()).toContain("<p>hi</p>");
    const js = await fetch(`${url}/app.js`);
    expect(js.headers.get("content-type")).toContain("text/javascript");
    expect((await fetch(`${url}/secret.bin`)).status).toBe(404);
    expect((await fetch(`${url}/../index.html`)).status).toBe(200); // normalized by fetch to /index.html
    expect((await fetch(`${url}/v0/health`)).status).toBe(200);
    expect((await fetch(`${url}/`, { method: "POST" })).status).toBe(404);
  });

  test("a directory without index.html is a configuration error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rebuno-assets-"));
    await expect(startDevKernel({ staticAssets: dir })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(startDevKernel({ staticAssets: join(dir, "missing") })).rejects.toBeInstanceOf(
      ConfigurationError,
    );
  });
});
