/**
 * A real loopback node:http "kernel" for transport tests. It verifies every v1 signature on its
 * own (node:crypto HMAC over the message it rebuilds from the raw request line, headers and body
 * bytes; nothing from @rebuno/protocol), records each request, and injects faults chosen per
 * request by the test's `route` function.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface SeenRequest {
  readonly method: string;
  /** Request target exactly as received on the request line. */
  readonly target: string;
  readonly headers: IncomingMessage["headers"];
  /** Undefined when the connection was reset before the body was read. */
  readonly body: string | undefined;
  /** The signature verified against the secret (false when absent or wrong). */
  readonly verified: boolean;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
  /** 1-based count of requests with this method + target so far. */
  readonly nth: number;
}

export type Action =
  | {
      readonly status: number;
      readonly json?: unknown;
      readonly text?: string;
      readonly headers?: Record<string, string>;
    }
  /** Destroy the socket before reading the body: nothing was processed. */
  | { readonly reset: "before-body" }
  /** Read the whole body, then destroy the socket: the request may have been processed. */
  | { readonly reset: "after-body" }
  /** Send headers and half a JSON body, then destroy the socket. */
  | { readonly truncate: true }
  /** Never answer (until the server closes). */
  | { readonly hang: true }
  | { readonly delayMs: number; readonly next: Action };

export interface RouteInfo {
  readonly method: string;
  readonly target: string;
  readonly nth: number;
  readonly headers: IncomingMessage["headers"];
}

export interface StubKernel {
  readonly url: string;
  readonly requests: SeenRequest[];
  /** Number of distinct TCP connections accepted. */
  connections(): number;
  count(method: string, targetSuffix: string): number;
  close(): Promise<void>;
}

export interface StubOptions {
  /** HMAC secret; `undefined` turns signature checks off (bearer routes). */
  readonly secret: string | undefined;
  /** Picks the answer; default: {@link defaultAnswer}. Called before the body is read. */
  readonly route?: (info: RouteInfo) => Action | undefined;
  /** Listen on this loopback port (default: any free port), e.g. to come back where a kernel was. */
  readonly port?: number | undefined;
}

const ONE_LINE = /^[^\r\n]*$/;

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? undefined : v;
}

/** Independent v1 verification: rebuild the message and compare HMACs in constant time. */
export function verifyV1(secret: string, req: IncomingMessage, body: Buffer): boolean {
  const ts = header(req, "rebuno-timestamp");
  const sig = header(req, "rebuno-signature");
  const dispatchId = header(req, "rebuno-dispatch-id") ?? "";
  const attempt = header(req, "rebuno-dispatch-attempt") ?? "";
  if (ts === undefined || sig === undefined || !/^\d+$/.test(ts)) return false;
  if (!ONE_LINE.test(dispatchId) || !ONE_LINE.test(attempt)) return false;
  const mac = createHmac("sha256", secret);
  mac.update(`rebuno-request-v1\n${req.method}\n${req.url}\n${ts}\n${dispatchId}\n${attempt}\n`, "utf8");
  mac.update(body);
  const expected = Buffer.from(`v1=${mac.digest("hex")}`);
  const got = Buffer.from(sig);
  return expected.length === got.length && timingSafeEqual(expected, got);
}

export const EXEC_ID = "018f3a2b-4c5d-7e6f-8a9b-0c1d2e3f4a5b";
export const STEP_ID = "9a3f0c5e2b1d4f6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a";

export function executionJson(id = EXEC_ID): Record<string, unknown> {
  return {
    id,
    agent_id: "test-agent",
    input: { q: 1 },
    status: "running",
    created_at: "2026-07-07T12:00:00Z",
    updated_at: "2026-07-07T12:00:01Z",
  };
}

export function stepJson(stepId = STEP_ID, executionId = EXEC_ID): Record<string, unknown> {
  return {
    step_id: stepId,
    execution_id: executionId,
    kind: "tool_call",
    target: "send_email",
    args_hash: "43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777",
    occurrence: 0,
    status: "succeeded",
    idempotency: "safe_to_retry",
    args: { a: 1 },
    result: { ok: true },
  };
}

export function resourceViewJson(key: string): Record<string, unknown> {
  return {
    key,
    driver_id: "sandbox",
    configuration: { image: "node" },
    coverage_reuse: false,
    every_steps: 2,
    on_completion: true,
    generation: 0,
    count: 0,
    registered_seq: 4,
    covered: false,
  };
}

/** A plausible kernel answer for each agent route. */
export function defaultAnswer(method: string, target: string): Action {
  const path = target.split("?")[0]!;
  if (method === "GET") {
    if (path.endsWith("/previous")) return { status: 200, json: { state: { turn: 1 } } };
    if (/\/steps$/.test(path)) return { status: 200, json: [stepJson()] };
    if (/\/steps\/[^/]+$/.test(path)) return { status: 200, json: stepJson() };
    return { status: 200, json: executionJson() };
  }
  if (/\/steps$/.test(path)) return { status: 200, json: { decision: "proceed", step_id: STEP_ID } };
  if (/\/steps\/[^/]+\/(complete|fail)$/.test(path)) return { status: 200, json: { decision: "recorded" } };
  if (path.endsWith("/suspend")) return { status: 200, json: { suspended: true } };
  if (/\/resources$/.test(path)) return { status: 200, json: resourceViewJson("workspace") };
  return { status: 204 };
}

function respond(res: ServerResponse, socket: Socket, action: Action): void {
  if ("delayMs" in action) {
    setTimeout(() => respond(res, socket, action.next), action.delayMs);
    return;
  }
  if ("hang" in action) return;
  if ("truncate" in action) {
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"decision":"pro');
    setTimeout(() => socket.destroy(), 10);
    return;
  }
  if ("reset" in action) {
    socket.destroy();
    return;
  }
  const headers: Record<string, string> = { ...action.headers };
  let text = action.text ?? "";
  if (action.json !== undefined) {
    text = `${JSON.stringify(action.json)}\n`;
    headers["content-type"] ??= "application/json; charset=utf-8";
  }
  res.writeHead(action.status, headers);
  res.end(action.status === 204 ? undefined : text);
}

/** Start the stub on 127.0.0.1, port 0. */
export async function startStubKernel(options: StubOptions): Promise<StubKernel> {
  const requests: SeenRequest[] = [];
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((req, res) => {
    const method = req.method ?? "";
    const target = req.url ?? "";
    const key = `${method} ${target}`;
    const nth = (counts.get(key) ?? 0) + 1;
    counts.set(key, nth);
    const action =
      options.route?.({ method, target, nth, headers: req.headers }) ?? defaultAnswer(method, target);
    const record = (body: Buffer | undefined) =>
      requests.push({
        method,
        target,
        headers: req.headers,
        body: body?.toString("utf8"),
        verified: body !== undefined && options.secret !== undefined && verifyV1(options.secret, req, body),
        timestamp: header(req, "rebuno-timestamp"),
        signature: header(req, "rebuno-signature"),
        nth,
      });
    if ("reset" in action && action.reset === "before-body") {
      record(undefined);
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      record(body);
      if (options.secret !== undefined && !requests.at(-1)!.verified && !("reset" in action)) {
        respond(res, req.socket, {
          status: 401,
          json: { code: "unauthorized", message: "invalid signature" },
        });
        return;
      }
      respond(res, req.socket, action);
    });
  });
  server.on("connection", (s) => {
    accepted++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => accepted,
    count: (method, suffix) =>
      requests.filter((r) => r.method === method && r.target.endsWith(suffix)).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
