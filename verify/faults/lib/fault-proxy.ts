/**
 * A loopback HTTP proxy between an agent (the SDK's transport) and a kernel that injects network
 * faults per request and logs what reached the kernel. Faults:
 * - `reset_before_forward`: the request is read, then the client's socket is destroyed; the kernel
 *   never sees it. (The client wrote its bytes, so for it the outcome is ambiguous.)
 * - `reset_after_forward`: the kernel answers, the answer is dropped and the socket destroyed.
 * - `truncate_response`: the kernel answers; half of the answer's body is sent, then a reset.
 * - `delay`: forwarded after `delayMs`.
 * - `status_502` / `status_503`: answered by the proxy with a gateway error, not forwarded.
 * - `hold`: the request is forwarded only when `release()` of the log entry is called (or never);
 *   crash tests use it to kill the agent at an exact protocol point.
 * - `blackhole_answer`: forwarded; the kernel's answer is recorded and never passed on (the
 *   connection stays open), so the kernel has acted and the agent has not heard.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type Fault =
  | "reset_before_forward"
  | "reset_after_forward"
  | "truncate_response"
  | "delay"
  | "status_502"
  | "status_503"
  | "hold"
  | "blackhole_answer";

/** Which agent route a request is, from its method and path. */
export type RouteKind =
  | "submit_step"
  | "complete_step"
  | "fail_step"
  | "heartbeat"
  | "complete_execution"
  | "fail_execution"
  | "read"
  | "other";

export interface ProxyEntry {
  readonly seq: number;
  readonly kind: RouteKind;
  readonly method: string;
  readonly path: string;
  readonly body: string;
  readonly dispatchId: string | undefined;
  readonly attempt: string | undefined;
  readonly fault: Fault | undefined;
  /** True once the request was sent on to the kernel. */
  forwarded: boolean;
  /** The kernel's status, when it answered. */
  status: number | undefined;
  /** The kernel's answer body, when it answered. */
  answer: string | undefined;
  /** For `hold`: forward it now. */
  release: () => void;
}

export interface FaultProxyOptions {
  /** Kernel origin, e.g. `http://127.0.0.1:4000`. */
  readonly target: string;
  /** Fault for one request (undefined: pass through). Called once per request, in arrival order. */
  readonly decide: (
    request: Omit<ProxyEntry, "fault" | "release" | "forwarded" | "status" | "answer">,
  ) => Fault | undefined;
  /** For `delay`. Default 300 ms. */
  readonly delayMs?: number;
  /** Called when the kernel's answer to an entry arrives (before it is passed on or dropped). */
  readonly onAnswer?: (entry: ProxyEntry) => void;
  /** Called when a request arrives, after its fault was decided. */
  readonly onRequest?: (entry: ProxyEntry) => void;
}

export interface FaultProxy {
  readonly url: string;
  readonly log: readonly ProxyEntry[];
  close(): Promise<void>;
}

export function routeKind(method: string, path: string): RouteKind {
  if (method === "GET") return "read";
  if (method !== "POST") return "other";
  if (/\/steps$/.test(path)) return "submit_step";
  if (/\/steps\/[^/]+\/complete$/.test(path)) return "complete_step";
  if (/\/steps\/[^/]+\/fail$/.test(path)) return "fail_step";
  if (/\/heartbeat$/.test(path)) return "heartbeat";
  if (/^\/v0\/executions\/[^/]+\/complete$/.test(path)) return "complete_execution";
  if (/^\/v0\/executions\/[^/]+\/fail$/.test(path)) return "fail_execution";
  return "other";
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  const log: ProxyEntry[] = [];
  const sockets = new Set<Socket>();

  const forward = (entry: ProxyEntry, req: IncomingMessage, body: Buffer, res: ServerResponse) => {
    entry.forwarded = true;
    const headers = { ...req.headers, host: target.host };
    delete headers.connection;
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => {
          const text = Buffer.concat(chunks);
          entry.status = answer.statusCode;
          entry.answer = text.toString("utf8");
          options.onAnswer?.(entry);
          if (entry.fault === "reset_after_forward") return res.socket?.destroy();
          if (entry.fault === "blackhole_answer") return;
          const out = { ...answer.headers };
          delete out.connection;
          delete out["transfer-encoding"];
          if (entry.fault === "truncate_response") {
            out["content-length"] = String(text.length);
            res.writeHead(answer.statusCode ?? 502, out);
            res.write(text.subarray(0, Math.floor(text.length / 2)));
            setTimeout(() => res.socket?.destroy(), 10);
            return;
          }
          res.writeHead(answer.statusCode ?? 502, out);
          res.end(text);
        });
      },
    );
    upstream.on("error", () => res.socket?.destroy());
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? "GET";
      const path = req.url ?? "/";
      const base = {
        seq: log.length,
        kind: routeKind(method, path.split("?")[0] ?? path),
        method,
        path,
        body: body.toString("utf8"),
        dispatchId: header(req, "rebuno-dispatch-id"),
        attempt: header(req, "rebuno-dispatch-attempt"),
      };
      const fault = options.decide(base);
      let released = false;
      const entry: ProxyEntry = {
        ...base,
        fault,
        forwarded: false,
        status: undefined,
        answer: undefined,
        release: () => {
          if (released) return;
          released = true;
          forward(entry, req, body, res);
        },
      };
      log.push(entry);
      options.onRequest?.(entry);
      switch (fault) {
        case "reset_before_forward":
          req.socket.destroy();
          return;
        case "status_502":
        case "status_503":
          res.writeHead(fault === "status_502" ? 502 : 503, { "content-type": "text/plain" });
          res.end(fault === "status_502" ? "bad gateway" : "service unavailable");
          return;
        case "delay":
          setTimeout(() => entry.release(), options.delayMs ?? 300);
          return;
        case "hold":
          return;
        default:
          entry.release();
      }
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A small seeded PRNG (mulberry32): fault plans replay exactly from a printed seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed for a fault test: `FAULT_SEED` when set (to replay a run), else a fresh one. */
export function faultSeed(): number {
  const fromEnv = process.env.FAULT_SEED;
  return fromEnv !== undefined && fromEnv !== "" ? Number(fromEnv) : (Date.now() % 2 ** 31) >>> 0;
}
