// The node:http adapter over real sockets: the whole-body fast path (body read in one go once the
// request is complete) and its streaming fallback (body still arriving, chunked, oversized), the
// header object node builds reused only when no name repeats, and one write per answer.
import { connect, type Socket } from "node:net";
import { signRequest } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { MAX_BODY_BYTES } from "../src/kernel.js";
import { Harness, type Lease } from "./harness.js";
import { stores } from "./stores.js";

const memory = stores.find((s) => s.name === "memory") ?? stores[0]!;

/** Open a socket to the kernel; `exchange` writes parts (with pauses) and reads until close. */
function open(base: string): Promise<Socket> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

async function exchange(base: string, parts: string[], pauseMs = 30): Promise<string> {
  const socket = await open(base);
  let out = "";
  socket.on("data", (d: Buffer) => (out += d.toString("latin1")));
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  for (const [i, part] of parts.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, pauseMs));
    socket.write(part);
  }
  await closed;
  return out;
}

/** Status codes of every answer in a (keep-alive, then closed) exchange, in order. */
function statuses(raw: string): number[] {
  return [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

function body(raw: string): string {
  return raw.slice(raw.indexOf("\r\n\r\n") + 4);
}

describe("node:http adapter", () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  function signedHead(path: string, lease: Lease, bodyText: string, extra: [string, string][] = []): string {
    const ts = String(Math.floor(h.now / 1000));
    const sig = signRequest({
      secret: "alpha-secret",
      method: "POST",
      target: path,
      timestamp: ts,
      dispatchId: lease.dispatchId,
      dispatchAttempt: lease.attempt,
      body: bodyText,
    });
    const headers: [string, string][] = [
      ["Content-Type", "application/json"],
      ["Rebuno-Agent-Id", "alpha"],
      ["Rebuno-Timestamp", ts],
      ["Rebuno-Dispatch-Id", lease.dispatchId],
      ["Rebuno-Dispatch-Attempt", String(lease.attempt)],
      ["Rebuno-Signature", sig],
      ...extra,
    ];
    return `POST ${path} HTTP/1.1\r\nHost: k\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join("")}`;
  }

  test("a body sent after the headers, in pieces, is read by the streaming path", async () => {
    h = await Harness.start(memory);
    const base = await h.kernel.listen();
    const { id, lease } = await h.started();
    const path = `/v0/executions/${id}/steps`;
    const text = '{"kind":"tool_call","target":"send_email","args":{"n":1.0}}';
    const head = `${signedHead(path, lease, text)}Content-Length: ${text.length}\r\nConnection: close\r\n\r\n`;
    const answer = await exchange(base, [head, text.slice(0, 10), text.slice(10)]);
    expect(statuses(answer)).toEqual([200]);
    expect(JSON.parse(body(answer)).decision).toBe("proceed");
    const steps = (await h.client("GET", `/v0/executions/${id}/steps`)).body;
    expect(steps[0].args).toEqual({ n: 1 });
  });

  test("a chunked body is served; one over the cap is drained and refused with 400", async () => {
    h = await Harness.start(memory);
    const base = await h.kernel.listen();
    const text = '{"agent_id":"alpha","input":{"k":"v"}}';
    const chunked = (t: string) => `${t.length.toString(16)}\r\n${t}\r\n0\r\n\r\n`;
    const ok = await exchange(base, [
      `POST /v0/executions HTTP/1.1\r\nHost: k\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(text)}`,
    ]);
    expect(statuses(ok)).toEqual([201]);
    const big = "x".repeat(1024 * 1024);
    const socket = await open(base);
    let out = "";
    socket.on("data", (d: Buffer) => (out += d.toString("latin1")));
    socket.on("error", () => undefined);
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.write(`POST /v0/executions HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n`);
    for (let sent = 0; sent <= MAX_BODY_BYTES && !socket.destroyed; sent += big.length) {
      await new Promise<void>((resolve) =>
        socket.write(`${big.length.toString(16)}\r\n${big}\r\n`, () => resolve()),
      );
    }
    await closed;
    expect(statuses(out)).toEqual([400]);
    expect(body(out)).toBe(
      '{"code":"validation_error","message":"validation error: request body over the 10 MiB limit"}\n',
    );
  });

  test("keep-alive: several requests on one connection are answered in order, one write each", async () => {
    h = await Harness.start(memory);
    const base = await h.kernel.listen();
    const { id, lease } = await h.started();
    const path = `/v0/executions/${id}/heartbeat`;
    const beat = `${signedHead(path, lease, "")}Content-Length: 0\r\n\r\n`;
    const health = "GET /v0/health HTTP/1.1\r\nHost: k\r\n\r\n";
    const last = "GET /v0/nope HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n";
    const answer = await exchange(base, [beat, health, beat, last]);
    expect(statuses(answer)).toEqual([204, 200, 204, 404]);
    // Headers exactly as node writes them for the core's answer (content-length added, no extra).
    const healthAnswer = answer.slice(answer.indexOf("HTTP/1.1 200"));
    const headBlock = healthAnswer.slice(0, healthAnswer.indexOf("\r\n\r\n")).split("\r\n");
    expect(headBlock.filter((l) => !l.startsWith("Date: "))).toEqual([
      "HTTP/1.1 200 OK",
      "content-type: application/json; charset=utf-8",
      "content-length: 16",
      "Connection: keep-alive",
      "Keep-Alive: timeout=5",
    ]);
    expect(body(healthAnswer).startsWith('{"status":"ok"}\n')).toBe(true);
  });

  test("pipelined requests in one write are each read whole and answered in order", async () => {
    h = await Harness.start(memory);
    const base = await h.kernel.listen();
    const { id, lease } = await h.started();
    const path = `/v0/executions/${id}/steps`;
    const submit = (n: number) => {
      const text = `{"kind":"tool_call","target":"t","args":{"n":${n}}}`;
      return `${signedHead(path, lease, text)}Content-Length: ${text.length}\r\n\r\n${text}`;
    };
    const last = "GET /v0/health HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n";
    const answer = await exchange(base, [submit(1) + submit(2) + submit(1) + last]);
    expect(statuses(answer)).toEqual([200, 200, 200, 200]);
    const decisions = [...answer.matchAll(/\{"decision":"([a-z_]+)"/g)].map((m) => m[1]);
    expect(decisions).toEqual(["proceed", "proceed", "proceed"]);
    const steps = (await h.client("GET", `/v0/executions/${id}/steps`)).body;
    const calls = steps.map((s: { args: unknown; occurrence: number }) =>
      JSON.stringify([s.args, s.occurrence]),
    );
    expect(calls.sort()).toEqual(['[{"n":1},0]', '[{"n":1},1]', '[{"n":2},0]']);
  });

  test("repeated headers are still seen over a socket (in any letter case)", async () => {
    h = await Harness.start(memory);
    const base = await h.kernel.listen();
    const { id, lease } = await h.started();
    const path = `/v0/executions/${id}/heartbeat`;
    const send = async (extra: [string, string][]) => {
      const answer = await exchange(base, [
        `${signedHead(path, lease, "", extra)}Content-Length: 0\r\nConnection: close\r\n\r\n`,
      ]);
      return { status: statuses(answer)[0], body: JSON.parse(body(answer) || "null") };
    };
    expect((await send([])).status).toBe(204);
    const ts = String(Math.floor(h.now / 1000));
    const cases: [[string, string], string][] = [
      [["rebuno-signature", "v1=00"], "unauthorized: duplicate Rebuno-Signature header"],
      [["REBUNO-AGENT-ID", "alpha"], "unauthorized: duplicate Rebuno-Agent-Id header"],
      [["rebuno-timestamp", ts], "unauthorized: invalid rebuno-timestamp header"],
      [["Rebuno-Dispatch-Id", lease.dispatchId], "unauthorized: invalid rebuno-dispatch-id header"],
      [["rebuno-dispatch-attempt", "1"], "unauthorized: invalid rebuno-dispatch-attempt header"],
    ];
    for (const [extra, message] of cases) {
      expect(await send([extra])).toEqual({ status: 401, body: { code: "unauthorized", message } });
    }
    // A repeated header the kernel does not read changes nothing.
    expect(
      (
        await send([
          ["X-Trace", "1"],
          ["x-trace", "2"],
        ])
      ).status,
    ).toBe(204);
  });

  test("a request abandoned mid-body does not disturb the kernel", async () => {
    h = await Harness.start(memory);
    const base = await h.kernel.listen();
    const socket = await open(base);
    socket.on("error", () => undefined);
    socket.write('POST /v0/executions HTTP/1.1\r\nHost: k\r\nContent-Length: 100\r\n\r\n{"agent_id":');
    await new Promise((r) => setTimeout(r, 30));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 30));
    const answer = await exchange(base, ["GET /v0/health HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n"]);
    expect(statuses(answer)).toEqual([200]);
    expect((await h.client("GET", "/v0/executions")).body.executions).toEqual([]);
  });
});
