// Every request the kernel refuses before routing gets the protocol's JSON error envelope over the
// socket, and the connection then closes in order (FIN, no reset), so clients read the answer:
// bodies over 10 MiB (400 validation_error, as docs/protocol.md §2 and the Go kernel), requests
// Node's HTTP parser refuses (431 header overflow, 400 malformed, including a bad chunk size, 408
// too slow), and those node would answer bare (400 no Host on HTTP/1.1, 417 unsupported Expect).
import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { onClientError } from "../src/http/client-error.js";
import { type DevKernel, MAX_BODY_BYTES, startDevKernel } from "../src/index.js";

const TOO_LARGE =
  '{"code":"validation_error","message":"validation error: request body over the 10 MiB limit"}\n';

interface Exchange {
  /** Everything received, as latin1 text. */
  readonly text: string;
  /** The socket error the client saw, if any (ECONNRESET = the answer may have been lost). */
  readonly error: string | undefined;
  /** The server closed its side in order (FIN) before the socket closed. */
  readonly endedByServer: boolean;
}

/**
 * Connect, let `drive` write to the socket, and collect everything until the socket closes (the
 * client closes its side once the server has). Bounded: a socket still open after 20 s fails.
 */
function exchange(base: string, drive: (socket: Socket) => Promise<void> | void): Promise<Exchange> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = "";
    let error: string | undefined;
    let endedByServer = false;
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`socket still open; received so far: ${text.slice(0, 200)}`));
    }, 20_000);
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on("end", () => {
      endedByServer = true;
      socket.end();
    });
    socket.on("close", () => {
      clearTimeout(guard);
      resolve({ text, error, endedByServer });
    });
    socket.on("connect", () => {
      Promise.resolve(drive(socket)).catch(() => undefined);
    });
  });
}

function write(socket: Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed || !socket.writable) return resolve();
    socket.write(data, () => resolve());
  });
}

const status = (raw: string) => Number(raw.slice(9, 12));
const body = (raw: string) => raw.slice(raw.indexOf("\r\n\r\n") + 4);
const header = (raw: string, name: string) =>
  new RegExp(`\r\n${name}: ([^\r]*)\r\n`, "i").exec(raw.slice(0, raw.indexOf("\r\n\r\n") + 2))?.[1];

describe("rejections over a socket", () => {
  let kernel: DevKernel;
  let base: string;
  afterEach(async () => {
    await kernel.close();
  });
  const start = async () => {
    kernel = await startDevKernel({ onError: () => {} });
    base = await kernel.listen();
  };

  test("a declared 11 MiB body, sent in full: drained, then 400 envelope and an orderly close", async () => {
    await start();
    const size = MAX_BODY_BYTES + 1024 * 1024;
    const chunk = Buffer.alloc(256 * 1024, "x");
    const r = await exchange(base, async (socket) => {
      await write(
        socket,
        `POST /v0/executions HTTP/1.1\r\nHost: k\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
      );
      for (let sent = 0; sent < size; sent += chunk.length) {
        await write(socket, chunk.subarray(0, Math.min(chunk.length, size - sent)));
      }
    });
    expect(r.error).toBeUndefined();
    expect(r.endedByServer).toBe(true);
    expect(status(r.text)).toBe(400);
    expect(header(r.text, "connection")).toBe("close");
    expect(body(r.text)).toBe(TOO_LARGE);
  });

  test("a chunked body growing past 10 MiB and then finished: same answer, no reset", async () => {
    await start();
    const piece = "y".repeat(512 * 1024);
    const r = await exchange(base, async (socket) => {
      await write(socket, "POST /v0/executions HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (let sent = 0; sent <= MAX_BODY_BYTES + piece.length; sent += piece.length) {
        await write(socket, `${piece.length.toString(16)}\r\n${piece}\r\n`);
      }
      await write(socket, "0\r\n\r\n");
    });
    expect(r.error).toBeUndefined();
    expect(r.endedByServer).toBe(true);
    expect(status(r.text)).toBe(400);
    expect(body(r.text)).toBe(TOO_LARGE);
  });

  test("Expect: 100-continue over the limit is refused before the body is sent", async () => {
    await start();
    const r = await exchange(base, (socket) =>
      write(
        socket,
        `POST /v0/executions HTTP/1.1\r\nHost: k\r\nExpect: 100-continue\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n`,
      ),
    );
    expect(r.text).not.toContain("100 Continue");
    expect(status(r.text)).toBe(400);
    expect(body(r.text)).toBe(TOO_LARGE);
  });

  test("Expect: 100-continue within the limit gets 100 Continue and is served", async () => {
    await start();
    const json = '{"agent_id":"nobody","input":{}}';
    const r = await exchange(base, async (socket) => {
      await write(
        socket,
        `POST /v0/executions HTTP/1.1\r\nHost: k\r\nConnection: close\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${json.length}\r\n\r\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      await write(socket, json);
    });
    expect(r.text.startsWith("HTTP/1.1 100 Continue\r\n\r\n")).toBe(true);
    const final = r.text.slice("HTTP/1.1 100 Continue\r\n\r\n".length);
    // Served: the body was read and routed (the agent named in it does not exist).
    expect(status(final)).toBe(404);
    expect(JSON.parse(body(final)).message).toContain("nobody");
  });

  test("headers over Node's limit → 431 envelope", async () => {
    await start();
    const r = await exchange(base, (socket) =>
      write(socket, `GET /v0/health HTTP/1.1\r\nHost: k\r\nX-Big: ${"z".repeat(20_000)}\r\n\r\n`),
    );
    expect(r.error).toBeUndefined();
    expect(status(r.text)).toBe(431);
    expect(header(r.text, "content-type")).toBe("application/json; charset=utf-8");
    expect(JSON.parse(body(r.text))).toEqual({
      code: "validation_error",
      message: "validation error: request header fields too large",
    });
  });

  test.each([
    ["a garbage request line", "NOT HTTP AT ALL\r\n\r\n"],
    ["a header without colon", "GET /v0/health HTTP/1.1\r\nHost: k\r\nbroken header\r\n\r\n"],
    ["a bad Content-Length", "POST /v0/executions HTTP/1.1\r\nHost: k\r\nContent-Length: -5\r\n\r\n"],
    [
      "both Content-Length and chunked",
      "POST /v0/executions HTTP/1.1\r\nHost: k\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
    ],
  ])("%s → 400 envelope", async (_name, raw) => {
    await start();
    const r = await exchange(base, (socket) => write(socket, raw));
    expect(r.error).toBeUndefined();
    expect(status(r.text)).toBe(400);
    const envelope = JSON.parse(body(r.text));
    expect(envelope.code).toBe("validation_error");
    expect(envelope.message).toMatch(/^validation error: malformed HTTP request \(HPE_[A-Z_]+\)$/);
  });

  test.each([
    ["in the first chunk", "zz\r\nabc\r\n0\r\n\r\n"],
    ["after a valid chunk", '5\r\n{"a":\r\nzz\r\n'],
  ])(
    "a chunked body with an invalid chunk size %s → 400 envelope, and the kernel keeps serving",
    async (_name, chunks) => {
      // Node's parser fails inside the body of a request it already handed over: that request's body
      // never ends, and it used to get no answer at all (the connection was just closed).
      await start();
      const r = await exchange(base, (socket) =>
        write(
          socket,
          `POST /v0/executions HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`,
        ),
      );
      expect(r.error).toBeUndefined();
      expect(r.endedByServer).toBe(true);
      expect(status(r.text)).toBe(400);
      expect(header(r.text, "content-type")).toBe("application/json; charset=utf-8");
      expect(JSON.parse(body(r.text))).toEqual({
        code: "validation_error",
        message: "validation error: malformed HTTP request (HPE_INVALID_CHUNK_SIZE)",
      });
      expect((await fetch(`${base}/v0/health`)).status).toBe(200);
    },
  );

  test("a chunked body past 10 MiB, then an invalid chunk size: one 400 envelope, no crash", async () => {
    // The oversized-body drain is waiting for the body's end when the parser refuses it; the
    // parser's answer goes out and the drain writes nothing after it.
    await start();
    const piece = "y".repeat(512 * 1024);
    const r = await exchange(base, async (socket) => {
      await write(socket, "POST /v0/executions HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (let sent = 0; sent <= MAX_BODY_BYTES + piece.length; sent += piece.length) {
        await write(socket, `${piece.length.toString(16)}\r\n${piece}\r\n`);
      }
      await write(socket, "zz\r\n");
    });
    expect(r.error).toBeUndefined();
    const answers = [...r.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(answers).toEqual([400]);
    expect(JSON.parse(body(r.text)).message).toBe(
      "validation error: malformed HTTP request (HPE_INVALID_CHUNK_SIZE)",
    );
    expect((await fetch(`${base}/v0/health`)).status).toBe(200);
  });

  test("an HTTP/1.1 request without a Host header → 400 envelope (not node's bare 400)", async () => {
    await start();
    const r = await exchange(base, (socket) =>
      write(
        socket,
        "POST /v0/executions HTTP/1.1\r\nContent-Length: 2\r\ncontent-type: application/json\r\n\r\n{}",
      ),
    );
    expect(r.error).toBeUndefined();
    expect(r.endedByServer).toBe(true);
    expect(status(r.text)).toBe(400);
    expect(header(r.text, "content-type")).toBe("application/json; charset=utf-8");
    expect(header(r.text, "connection")).toBe("close");
    expect(JSON.parse(body(r.text))).toEqual({
      code: "validation_error",
      message: "validation error: HTTP/1.1 request without a Host header",
    });
    expect((await fetch(`${base}/v0/health`)).status).toBe(200);
  });

  test("an HTTP/1.0 request without a Host header is served (Host is required from 1.1 on)", async () => {
    await start();
    const r = await exchange(base, (socket) => write(socket, "GET /v0/health HTTP/1.0\r\n\r\n"));
    expect(status(r.text)).toBe(200);
    expect(JSON.parse(body(r.text))).toEqual({ status: "ok" });
  });

  test("an Expect header other than 100-continue → 417 envelope (not node's bare 417)", async () => {
    await start();
    const r = await exchange(base, (socket) =>
      write(
        socket,
        "POST /v0/executions HTTP/1.1\r\nHost: k\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}",
      ),
    );
    expect(r.error).toBeUndefined();
    expect(status(r.text)).toBe(417);
    expect(JSON.parse(body(r.text))).toEqual({
      code: "validation_error",
      message: 'validation error: unsupported Expect header "teapot"',
    });
  });

  test("garbage after an answered keep-alive request gets its own envelope", async () => {
    await start();
    const r = await exchange(base, async (socket) => {
      await write(socket, "GET /v0/health HTTP/1.1\r\nHost: k\r\n\r\n");
      await new Promise((resolve) => setTimeout(resolve, 100));
      await write(socket, "\x00\x01garbage\r\n\r\n");
    });
    const answers = [...r.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(answers).toEqual([200, 400]);
  });

  test("body bytes sent without length framing: the request is answered first, then the garbage refused", async () => {
    // Node's client sends an OPTIONS/DELETE body this way; the bytes parse as a second request. The
    // first, valid request must still get its answer (it used to be dropped with a reset).
    await start();
    const r = await exchange(base, async (socket) => {
      await write(socket, "OPTIONS /v0/health HTTP/1.1\r\nHost: k\r\n\r\n[false]");
    });
    const answers = [...r.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(answers).toEqual([405, 400]);
    expect(r.text).toContain('"code":"validation_error"');
  });
});

describe("request timeout (408) from the clientError listener", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  test("headers not received in time → 408 envelope", async () => {
    // The kernel's own timeouts are long; the same listener on a server with short ones.
    server = createServer(
      { headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 },
      (_q, s) => s.end(),
    );
    server.on("clientError", onClientError);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
    const port = (server.address() as { port: number }).port;
    const r = await exchange(`http://127.0.0.1:${port}`, (socket) =>
      write(socket, "GET / HTTP/1.1\r\nHost: k\r\n"),
    );
    expect(status(r.text)).toBe(408);
    expect(JSON.parse(body(r.text))).toEqual({ code: "timeout", message: "request not received in time" });
  });
});

describe("a client that gives up while its oversized body is drained", () => {
  test("the kernel keeps serving", async () => {
    const kernel = await startDevKernel({ onError: () => {} });
    try {
      const base = await kernel.listen();
      await exchange(base, async (socket) => {
        await write(
          socket,
          `POST /v0/executions HTTP/1.1\r\nHost: k\r\nContent-Length: ${MAX_BODY_BYTES * 2}\r\n\r\n`,
        );
        await write(socket, Buffer.alloc(1024 * 1024, "x"));
        socket.resetAndDestroy();
      });
      const health = await fetch(`${base}/v0/health`);
      expect(health.status).toBe(200);
    } finally {
      await kernel.close();
    }
  });
});
