// The `node:http` webhook poster (engine/webhook-post.ts) against real loopback servers: what the
// agent receives, keep-alive reuse, no redirects, and failures classified like fetch's
// (delivery-failures.test.ts covers the same classes through the kernel).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { networkFailure } from "../src/engine/dispatcher.js";
import { WebhookPoster } from "../src/engine/webhook-post.js";

const closers: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Seen {
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
  readonly remotePort: number | undefined;
}

async function server(
  answer: (res: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[]; sockets: Socket[] }> {
  const seen: Seen[] = [];
  const sockets: Socket[] = [];
  const s: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        remotePort: req.socket.remotePort,
      });
      answer(res);
    });
  });
  s.on("connection", (socket: Socket) => sockets.push(socket));
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`, seen, sockets };
}

function poster(): WebhookPoster {
  const p = new WebhookPoster();
  closers.push(() => p.close());
  return p;
}

const HEADERS = { "content-type": "application/json", "rebuno-signature": "sig" };

describe("WebhookPoster", () => {
  test("posts the exact body and headers, resolves with the status, reuses the connection", async () => {
    const { url, seen } = await server((res) => res.writeHead(200).end("ok"));
    const p = poster();
    const body = '{"execution_id":"e","dispatch_id":"d","dispatch_attempt":1,"note":"é"}';
    expect(await p.post(url, HEADERS, body, 10_000)).toBe(200);
    expect(await p.post(url, HEADERS, body, 10_000)).toBe(200);
    expect(seen).toHaveLength(2);
    expect(seen[0]!.body).toBe(body);
    expect(seen[0]!.headers).toMatchObject({
      "content-type": "application/json",
      "rebuno-signature": "sig",
      "content-length": String(Buffer.byteLength(body)),
    });
    expect(seen[1]!.remotePort).toBe(seen[0]!.remotePort);
  });

  test("a non-2xx answer is its status; a redirect is not followed", async () => {
    const refused = await server((res) => res.writeHead(401).end());
    expect(await poster().post(refused.url, HEADERS, "{}", 10_000)).toBe(401);
    const moved = await server((res) => res.writeHead(302, { location: refused.url }).end());
    expect(await poster().post(moved.url, HEADERS, "{}", 10_000)).toBe(302);
    expect(moved.seen).toHaveLength(1);
    expect(refused.seen).toHaveLength(1);
  });

  test("nothing listening: rejects with the socket error, classified connection_refused", async () => {
    const { url } = await server(() => {});
    const port = new URL(url).port;
    await closers.pop()!(); // stop the server: the port is now closed
    const err = await poster()
      .post(`http://127.0.0.1:${port}/`, HEADERS, "{}", 10_000)
      .catch((e: unknown) => e);
    expect(networkFailure(err)).toEqual({
      error_class: "connection_refused",
      error: "connection refused: is the agent running?",
    });
  });

  test("an agent that never answers: rejects after the timeout, classified timeout", async () => {
    const { url, seen } = await server(() => {});
    const err = await poster()
      .post(url, HEADERS, "{}", 200)
      .catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(networkFailure(err).error_class).toBe("timeout");
  });

  test("a scheme other than http(s) is refused before connecting", async () => {
    const err = await poster()
      .post("ftp://127.0.0.1/", HEADERS, "{}", 10_000)
      .catch((e: unknown) => e);
    expect(networkFailure(err)).toMatchObject({ error_class: "network_error" });
  });

  test("close() ends the kept-alive connections", async () => {
    const { url, sockets } = await server((res) => res.writeHead(204).end());
    const p = new WebhookPoster();
    expect(await p.post(url, HEADERS, "{}", 10_000)).toBe(204);
    expect(sockets).toHaveLength(1);
    const ended = new Promise<void>((r) => sockets[0]!.once("close", () => r()));
    p.close();
    await ended; // bounded by the test timeout; without close() the idle socket stays open
  });
});
