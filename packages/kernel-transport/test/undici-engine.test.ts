/**
 * The undici engine (`Pool.dispatch` with our own handler) against real loopback servers:
 * timeouts, aborts, the unsent/ambiguous split the retry rules rely on, large and multi-chunk
 * bodies, error answers, and servers that close keep-alive sockets. No mocks: every case is a
 * node:http server doing the thing.
 */
import { createHash } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  ConflictError,
  InternalError,
  KernelError,
  LeaseSuperseded,
  NetworkError,
  NotFoundError,
  TimeoutError,
} from "@rebuno/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  createAgentTransport,
  createHttpCore,
  type HttpCore,
  isUnsentFailure,
  retryAfterMs,
  SubmissionOutcomeUnknown,
} from "../src/index.js";
import { AGENT, LEASE, memoryLogger, SECRET } from "./helpers/fixtures.js";
import { EXEC_ID, STEP_ID } from "./helpers/stub-kernel.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

interface TestServer {
  readonly url: string;
  readonly port: number;
  /** Requests whose body was read completely, in order. */
  readonly seen: { method: string; target: string; body: Buffer }[];
  connections(): number;
  close(): Promise<void>;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

/** A node:http server that reads each body, records it, then calls `handler`. */
async function serve(handler: Handler, port = 0): Promise<TestServer> {
  const seen: TestServer["seen"] = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? "", target: req.url ?? "", body });
      handler(req, res, body);
    });
  });
  server.on("connection", (s) => {
    accepted++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const s: TestServer = {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    seen,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const sock of sockets) sock.destroy();
        server.close(() => resolve());
      }),
  };
  open.push(s);
  return s;
}

/**
 * {@link serve} on a given port that was just freed; another process may hold it for a moment
 * (an outgoing connection's ephemeral port), so EADDRINUSE is retried for a few seconds.
 */
async function serveOnPort(handler: Handler, port: number): Promise<TestServer> {
  for (let i = 0; ; i++) {
    try {
      return await serve(handler, port);
    } catch (error) {
      if ((error as { code?: string }).code !== "EADDRINUSE" || i >= 50) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Resolves once `socket` has closed (at once if it already has); bounded. */
function socketClosed(socket: Socket, withinMs = 10_000): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`socket not closed within ${withinMs} ms`)), withinMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

function core(url: string, extra: Partial<Parameters<typeof createHttpCore>[0]> = {}): HttpCore {
  const c = createHttpCore({ baseUrl: url, retry: { attempts: 1 }, logger: memoryLogger(), ...extra });
  open.push(c);
  expect(c.engine).toBe("undici");
  return c;
}

function transport(url: string, extra: Partial<Parameters<typeof createAgentTransport>[0]> = {}) {
  const t = createAgentTransport({
    baseUrl: url,
    agentId: AGENT,
    secret: SECRET,
    logger: memoryLogger(),
    retry: { attempts: 3, baseMs: 20, maxMs: 40 },
    ...extra,
  });
  open.push(t);
  return t;
}

const SUBMIT = { kind: "tool_call", target: "charge", args: { cents: 1 } } as const;
const PROCEED = { decision: "proceed", step_id: STEP_ID };

describe("timeouts", () => {
  it("no answer at all: TimeoutError carrying undici's headers timeout", async () => {
    const s = await serve(() => {}); // reads the request, never answers
    const err = await core(s.url)
      .request({ method: "POST", path: "/slow", body: "{}", timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toBe("POST /slow timed out after 300 ms");
    expect((err as { cause?: { code?: string } }).cause?.code).toBe("UND_ERR_HEADERS_TIMEOUT");
    expect(isUnsentFailure(err)).toBe(false);
  });

  it("a body that stalls after the headers: TimeoutError from the body timeout", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "40" });
      res.write('{"decision":"pro'); // then nothing, socket kept open
    });
    const err = await core(s.url)
      .request({ method: "GET", path: "/stall", timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe("UND_ERR_BODY_TIMEOUT");
  });

  it("a stalled submission answer is an unknown outcome, sent once", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"decision":');
    });
    const err = await transport(s.url)
      .submitStep(EXEC_ID, LEASE, SUBMIT, { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubmissionOutcomeUnknown);
    expect((err as Error).cause).toBeInstanceOf(TimeoutError);
    await new Promise((r) => setTimeout(r, 80)); // a wrong retry would arrive by now
    expect(s.seen).toHaveLength(1);
  });
});

describe("aborts", () => {
  it("aborting mid-request rejects with the reason at once and frees the socket", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/hang") return;
      json(res, 200, { ok: true });
    });
    const c = core(s.url);
    const controller = new AbortController();
    const pending = c.request({ method: "GET", path: "/hang", signal: controller.signal });
    await new Promise((r) => setTimeout(r, 50));
    const reason = new Error("stop now");
    controller.abort(reason);
    // At once: settled within the abort's own turn, before the event loop runs anything else.
    const beforeNextTurn = await Promise.race([
      pending.then(
        () => "answered",
        (e: unknown) => e,
      ),
      new Promise((r) => setImmediate(() => r("still pending after a loop turn"))),
    ]);
    expect(beforeNextTurn).toBe(reason);
    await expect(c.requestJson({ method: "GET", path: "/next" })).resolves.toEqual({ ok: true });
  });

  it("a request still queued in the pool fails on abort without ever being sent", async () => {
    let held: ServerResponse | undefined;
    const s = await serve((req, res) => {
      if (req.url === "/hang")
        held = res; // answered only when the test says so
      else json(res, 200, { ok: true });
    });
    const c = core(s.url, { connections: 1 });
    const first = c.request({ method: "GET", path: "/hang" });
    const controller = new AbortController();
    const queued = c.request({ method: "POST", path: "/queued", body: "{}", signal: controller.signal });
    // The one socket is busy with /hang, so /queued waits in the pool.
    for (let i = 0; i < 200 && held === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(held).toBeDefined();
    controller.abort(new Error("gave up"));
    await expect(queued).rejects.toThrow("gave up");
    // Free the socket; a later call goes after anything still queued (FIFO on one socket), so once
    // it is answered the server has seen every request the pool was ever going to send.
    json(held!, 200, { ok: true });
    await expect(first).resolves.toMatchObject({ status: 200 });
    await expect(c.request({ method: "GET", path: "/after" })).resolves.toMatchObject({ status: 200 });
    expect(s.seen.map((r) => r.target)).toEqual(["/hang", "/after"]);
  });

  it("one abort cancels every call in flight on that signal, and only those", async () => {
    const s = await serve((req, res) => {
      if (req.url?.startsWith("/hang")) return;
      json(res, 200, { ok: true });
    });
    const c = core(s.url);
    const controller = new AbortController();
    const other = new AbortController();
    const signal = AbortSignal.any([controller.signal, new AbortController().signal]);
    const pending = [1, 2, 3].map((i) => c.request({ method: "GET", path: `/hang/${i}`, signal }));
    const survivor = c.request({ method: "GET", path: "/hang/other", signal: other.signal, timeoutMs: 300 });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(new Error("all of them"));
    for (const p of pending) await expect(p).rejects.toThrow("all of them");
    await expect(survivor).rejects.toBeInstanceOf(TimeoutError); // not aborted by the other signal
    await expect(c.request({ method: "GET", path: "/ok", signal })).rejects.toThrow("all of them");
  });

  it("drops its abort listener once the signal has been idle for a sweep", async () => {
    const s = await serve((_req, res) => json(res, 200, { ok: true }));
    const c = core(s.url);
    const signal = AbortSignal.any([new AbortController().signal]);
    for (let i = 0; i < 3; i++) await c.request({ method: "GET", path: "/", signal });
    expect(getEventListeners(signal, "abort")).toHaveLength(1); // one per signal, not per call
    // Two sweeps at most (1 s apart); allow a loaded machine some slack.
    const started = Date.now();
    while (getEventListeners(signal, "abort").length > 0 && Date.now() - started < 6_000) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // not dropped while still in use
    // A later call registers it again and is still abortable.
    const controller = new AbortController();
    const again = c.request({ method: "GET", path: "/", signal: controller.signal });
    await expect(again).resolves.toMatchObject({ status: 200 });
  });

  it("a bound transport whose signal aborts mid-submission throws LeaseSuperseded, not an unknown outcome", async () => {
    const s = await serve(() => {});
    const controller = new AbortController();
    const t = transport(s.url).withSignal(controller.signal);
    const pending = t.submitStep(EXEC_ID, LEASE, SUBMIT).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(new LeaseSuperseded("lease lost"));
    const err = await pending;
    expect(err).toBeInstanceOf(LeaseSuperseded);
    expect(err).not.toBeInstanceOf(SubmissionOutcomeUnknown);
  });
});

describe("unsent versus ambiguous failures", () => {
  it("connection refused proves nothing was sent: submitStep is re-sent and succeeds once", async () => {
    const probe = await serve(() => {});
    const port = probe.port;
    await probe.close();
    open.splice(open.indexOf(probe), 1);
    const logger = memoryLogger();
    // Retries for several seconds, so a busy machine still brings the server up within them.
    const t = transport(`http://127.0.0.1:${port}`, {
      logger,
      retry: { attempts: 40, baseMs: 100, maxMs: 100 },
    });
    const pending = t.submitStep(EXEC_ID, LEASE, SUBMIT);
    // The server comes up on the same port only after the first attempt was refused.
    for (let i = 0; i < 500 && !logger.lines.some((l) => l.message.startsWith("retrying POST")); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    // Only a refusal can be retried for a submission ("unsent-only"): nothing was listening.
    expect(logger.lines.some((l) => l.message.startsWith("retrying POST"))).toBe(true);
    const s = await serveOnPort((_req, res) => json(res, 200, PROCEED), port);
    await expect(pending).resolves.toMatchObject({ decision: "proceed", stepId: STEP_ID });
    expect(s.seen).toHaveLength(1);
  });

  it("a refused connection is classified unsent", async () => {
    const probe = await serve(() => {});
    await probe.close();
    open.splice(open.indexOf(probe), 1);
    const err = await core(probe.url)
      .request({ method: "POST", path: "/x", body: "{}" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(isUnsentFailure(err)).toBe(true);
  });

  it("a reset after the request was read is ambiguous: one submission, unknown outcome", async () => {
    const s = await serve((req) => req.socket.destroy());
    const err = await transport(s.url)
      .submitStep(EXEC_ID, LEASE, SUBMIT)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubmissionOutcomeUnknown);
    const cause = (err as Error).cause;
    expect(cause).toBeInstanceOf(NetworkError);
    expect(isUnsentFailure(cause)).toBe(false);
    await new Promise((r) => setTimeout(r, 80));
    expect(s.seen).toHaveLength(1);
  });

  it("a reset before any answer on an idempotent call is re-sent", async () => {
    let n = 0;
    const s = await serve((req, res) => {
      if (++n === 1) req.socket.destroy();
      else json(res, 200, { decision: "recorded" });
    });
    const ack = await transport(s.url).completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 });
    expect(ack).toEqual({ decision: "recorded" });
    expect(s.seen).toHaveLength(2);
  });
});

describe("bodies", () => {
  it("sends and receives multi-megabyte bodies intact, across many chunks and split characters", async () => {
    // 3-byte and 4-byte UTF-8 characters make chunk boundaries fall inside characters.
    const big = "é€😀".repeat(400_000);
    const s = await serve((_req, res, body) => {
      const digest = createHash("sha256").update(body).digest("hex");
      json(res, 200, { digest, echo: big });
    });
    const sent = { text: big };
    const out = (await core(s.url).requestJson({
      method: "POST",
      path: "/big",
      body: JSON.stringify(sent),
    })) as { digest: string; echo: string };
    expect(out.digest).toBe(createHash("sha256").update(JSON.stringify(sent)).digest("hex"));
    expect(out.echo).toBe(big);
  });

  it("an empty 200 and a 204 both read as no body", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/204") res.writeHead(204).end();
      else res.writeHead(200, { "content-length": "0" }).end();
    });
    const c = core(s.url);
    expect(await c.requestJson({ method: "GET", path: "/200" })).toBeUndefined();
    expect(await c.request({ method: "POST", path: "/204" })).toMatchObject({ status: 204, text: "" });
  });

  it("drops a UTF-8 byte-order mark, as undici's body.text() does", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]));
    });
    expect(await core(s.url).requestJson({ method: "GET", path: "/bom" })).toEqual({ a: 1 });
  });

  it("skips 1xx informational answers and reads the final one", async () => {
    const s = await serve((_req, res) => {
      res.writeEarlyHints({ link: "</x>; rel=preload" });
      json(res, 200, { final: true });
    });
    expect(await core(s.url).requestJson({ method: "GET", path: "/hints" })).toEqual({ final: true });
  });

  it("a 2xx body that is not JSON is an invalid_response KernelError", async () => {
    const s = await serve((_req, res) => res.writeHead(200).end("<html>proxy</html>"));
    const err = await core(s.url)
      .requestJson({ method: "GET", path: "/html" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KernelError);
    expect(err).toMatchObject({ code: "invalid_response", status: 200 });
  });
});

describe("error answers", () => {
  it("maps envelopes, statuses without envelopes, and Retry-After", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/409") json(res, 409, { code: "conflict", message: "taken" }, { "retry-after": "3" });
      else if (req.url === "/404") res.writeHead(404).end();
      else res.writeHead(500, { "content-type": "text/html" }).end("<h1>oops</h1>");
    });
    const c = core(s.url);
    const conflict = await c.request({ method: "POST", path: "/409" }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ message: "taken", status: 409 });
    expect(retryAfterMs(conflict)).toBe(3000);
    await expect(c.request({ method: "GET", path: "/404" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(c.request({ method: "GET", path: "/500" })).rejects.toBeInstanceOf(InternalError);
  });
});

describe("keep-alive sockets the server closes", () => {
  it("a server that closes after every answer: each call opens a new socket and succeeds", async () => {
    const s = await serve((_req, res) => {
      res.setHeader("connection", "close");
      json(res, 200, { decision: "recorded" });
    });
    const t = transport(s.url);
    for (let i = 0; i < 5; i++) {
      expect(await t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: i })).toEqual({ decision: "recorded" });
    }
    expect(s.connections()).toBe(5);
  });

  it("a server that drops idle keep-alive sockets: the next call uses a fresh one", async () => {
    const s = await serve((req, res) => {
      json(res, 200, PROCEED);
      // Close the idle socket shortly after the answer, without announcing it.
      res.on("finish", () => setTimeout(() => req.socket.destroy(), 10));
    });
    // undici's client-side sockets to this server (its diagnostics channel), to wait until the
    // client has seen each close: undici's own "close" listener runs before ours.
    const clientSockets: Socket[] = [];
    const onConnected = (message: unknown) => {
      const socket = (message as { socket: Socket }).socket;
      if (socket.remotePort === s.port) clientSockets.push(socket);
    };
    diagnosticsChannel.subscribe("undici:client:connected", onConnected);
    try {
      const t = transport(s.url);
      for (let i = 0; i < 3; i++) {
        await expect(t.submitStep(EXEC_ID, LEASE, SUBMIT)).resolves.toMatchObject({ decision: "proceed" });
        expect(clientSockets).toHaveLength(i + 1);
        await socketClosed(clientSockets[i]!);
      }
    } finally {
      diagnosticsChannel.unsubscribe("undici:client:connected", onConnected);
    }
    expect(s.seen).toHaveLength(3);
    expect(s.connections()).toBe(3);
  });
});

it("a closed core refuses further calls with a NetworkError", async () => {
  const s = await serve((_req, res) => json(res, 200, {}));
  const c = createHttpCore({ baseUrl: s.url, retry: { attempts: 1 }, logger: memoryLogger() });
  await c.request({ method: "GET", path: "/" });
  await c.close();
  await expect(c.request({ method: "GET", path: "/" })).rejects.toBeInstanceOf(NetworkError);
});
