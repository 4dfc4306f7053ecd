/**
 * A loopback `node:http` server for the client's unit tests. Each test queues the exact responses
 * it wants (status, JSON body, or raw chunks written with pauses for SSE) and afterwards asserts on
 * the recorded requests: method, path, query, headers and body as received on the socket.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  /** The raw query string with its `?`, or `""` (to assert the exact order and escaping). */
  readonly search: string;
  readonly headers: IncomingMessage["headers"];
  readonly bodyText: string;
  /** The body parsed as JSON, `undefined` when there was none. */
  readonly body: unknown;
}

/** How to answer one request. */
export type Reply =
  | { readonly status: number; readonly json?: unknown; readonly text?: string }
  | {
      readonly status: number;
      readonly chunks: readonly (string | Uint8Array)[];
      readonly gapMs?: number;
      readonly keepOpen?: boolean;
    }
  | ((req: RecordedRequest, res: ServerResponse) => void | Promise<void>);

/** The running fake kernel. */
export interface FakeKernel {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Queue replies, answered in order; an empty queue answers 599 so a test fails loudly. */
  reply(...replies: Reply[]): void;
  close(): Promise<void>;
}

const EXECUTION_ID = "0192f1a0-0000-7000-8000-000000000000";

/** A protocol-shaped execution (wire form, snake_case) with overrides. */
export function wireExecution(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: EXECUTION_ID,
    agent_id: "researcher",
    input: { query: "hello" },
    status: "running",
    created_at: "2026-07-07T12:00:00.123456789Z",
    updated_at: "2026-07-07T12:00:03.5Z",
    ...overrides,
  };
}

/** A protocol-shaped event (wire form). */
export function wireEvent(
  seq: number,
  type = "step.executing",
  executionId = EXECUTION_ID,
): Record<string, unknown> {
  return {
    execution_id: executionId,
    event_seq: seq,
    type,
    payload: { execution_id: executionId },
    occurred_at: "2026-07-07T12:00:00Z",
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

async function answer(reply: Reply, rec: RecordedRequest, res: ServerResponse): Promise<void> {
  if (typeof reply === "function") return reply(rec, res);
  if ("chunks" in reply) {
    res.writeHead(reply.status, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    res.flushHeaders();
    for (const c of reply.chunks) {
      res.write(c);
      await sleep(reply.gapMs ?? 5);
    }
    if (!reply.keepOpen) res.end();
    return;
  }
  if (reply.json === undefined && reply.text === undefined) {
    res.writeHead(reply.status).end();
    return;
  }
  const text = reply.text ?? `${JSON.stringify(reply.json)}\n`;
  res.writeHead(reply.status, { "Content-Type": "application/json; charset=utf-8" }).end(text);
}

/** Start a fake kernel on 127.0.0.1 with a random port. */
export async function startFakeKernel(): Promise<FakeKernel> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const bodyText = await readBody(req);
    const rec: RecordedRequest = {
      method: req.method ?? "",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      search: url.search,
      headers: req.headers,
      bodyText,
      body: bodyText === "" ? undefined : JSON.parse(bodyText),
    };
    requests.push(rec);
    const next = queue.shift();
    if (next === undefined) {
      res.writeHead(599).end("no reply queued");
      return;
    }
    await answer(next, rec, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...r) => queue.push(...r),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
