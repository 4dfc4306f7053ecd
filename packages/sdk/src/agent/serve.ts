/**
 * `agent.serve()`: a small `node:http` front for the agent's webhook handler. Everything received
 * before the signature check is untrusted: a request Node's parser refuses gets the JSON error
 * envelope (`clientError`), slow clients are cut off by the server's timeouts, and a handler
 * failure answers 500 instead of reaching the process.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Logger } from "../runtime/logger.js";
import type { WebhookRejection, WebhookRejectionCause } from "./rejections.js";
import {
  INTERNAL_ERROR,
  MAX_WEBHOOK_BYTES,
  TOO_LARGE,
  TRUNCATED_BODY,
  type WebhookAnswer,
} from "./webhook.js";

/** The default interface: loopback, so a laptop agent is not reachable from the network. */
export const DEFAULT_SERVE_HOST = "127.0.0.1";

/** Options of `agent.serve()`. */
export interface ServeOptions {
  /**
   * Interface to bind. Default `127.0.0.1` (loopback only: right for a laptop next to
   * `rebuno dev`). In a container behind a load balancer, bind `0.0.0.0` (IPv4) or `::` (IPv6 and,
   * on most systems, IPv4) so the kernel can reach the agent.
   */
  readonly host?: string;
  /** Port; `0` picks a free one (read it from the handle). Default 8000. */
  readonly port?: number;
  /** A client must send its complete headers within this many ms (default 10 000). */
  readonly headersTimeoutMs?: number;
  /** A client must send its complete request within this many ms (default 30 000). */
  readonly requestTimeoutMs?: number;
}

/** A running server. */
export interface ServeHandle {
  /** Full webhook URL (`http://host:port/webhook`); register this with the kernel. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening, then drains the agent's runs (abort + wait). */
  close(): Promise<void>;
}

/** What one request carries besides method, target, signature and body. */
export interface RequestMeta {
  readonly contentType?: string | null | undefined;
  readonly remoteAddress?: string | undefined;
}

/** The agent surface `serve` needs. */
export interface Servable {
  readonly id: string;
  readonly webhookPath: string;
  readonly logger: Logger;
  receive(
    method: string,
    target: string,
    signature: string | null | undefined,
    body: Uint8Array,
    meta?: RequestMeta,
  ): WebhookAnswer;
  /** Records a refusal decided outside `receive` (parser errors, timeouts, cut-off bodies). */
  reject(rejection: WebhookRejection): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, answer: WebhookAnswer): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(answer.status, {
    ...answer.headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(answer.body),
  });
  res.end(answer.body);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function onRequest(agent: Servable, req: IncomingMessage, res: ServerResponse): void {
  const remoteAddress = req.socket.remoteAddress;
  const refuseTooLarge = (): void => {
    res.setHeader("connection", "close");
    send(res, TOO_LARGE);
    agent.reject({
      cause: "payload_too_large",
      status: 413,
      message: TOO_LARGE.rejection?.message ?? "",
      method: req.method,
      target: req.url,
      remoteAddress,
    });
  };
  const declared = Number(header(req, "content-length") ?? "0");
  if (declared > MAX_WEBHOOK_BYTES) {
    // The client may hang up mid-body once it read the 413: nothing to do then.
    req.on("error", () => res.destroy());
    refuseTooLarge();
    // Drain (bounded by requestTimeout) so the client reads the 413 instead of a reset.
    req.resume();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on("data", (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > MAX_WEBHOOK_BYTES) {
      refused = true;
      chunks.length = 0;
      refuseTooLarge();
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (refused) return;
    let answer: WebhookAnswer;
    try {
      answer = agent.receive(
        req.method ?? "GET",
        req.url ?? "/",
        header(req, "rebuno-signature"),
        chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
        { contentType: header(req, "content-type"), remoteAddress },
      );
    } catch (error) {
      answer = INTERNAL_ERROR;
      agent.reject({
        cause: "internal_error",
        status: 500,
        message: error instanceof Error ? error.message : String(error),
        method: req.method,
        target: req.url,
        remoteAddress,
      });
    }
    send(res, answer);
  });
  // A client that closes mid-body: nothing can be answered, but the refusal is counted.
  req.on("error", () => {
    if (!refused && !req.complete) {
      agent.reject({
        cause: "truncated_body",
        status: 0,
        message: TRUNCATED_BODY.rejection?.message ?? "",
        method: req.method,
        target: req.url,
        remoteAddress,
      });
    }
    res.destroy();
  });
}

const CLIENT_ERRORS: Record<string, { status: number; cause: WebhookRejectionCause; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, cause: "headers_too_large", message: "request headers too large" },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    cause: "request_timeout",
    message: "the request was not received in time",
  },
  ERR_HTTP_HEADERS_TIMEOUT: {
    status: 408,
    cause: "request_timeout",
    message: "the request headers were not received in time",
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};

/**
 * Node's parser refused the request (or the client was too slow): answer the JSON error envelope
 * where nothing has been written on the socket yet, then close it.
 */
function onClientError(agent: Servable, error: Error & { code?: string }, socket: Socket): void {
  const code = error.code ?? "";
  // A peer that reset or vanished: there is no one to answer, and nothing to count.
  if (code === "ECONNRESET" || code === "EPIPE") {
    socket.destroy();
    return;
  }
  const known = CLIENT_ERRORS[code] ?? {
    status: 400,
    cause: "malformed_request" as const,
    message: `malformed HTTP request (${code || error.message})`,
  };
  agent.reject({
    cause: known.cause,
    status: known.status,
    message: known.message,
    remoteAddress: socket.remoteAddress,
  });
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && (pending === undefined || pending === null || !pending.headersSent)) {
    const body = JSON.stringify({
      code: known.status === 408 ? "timeout" : "validation_error",
      message: known.message,
    });
    socket.end(
      `HTTP/1.1 ${known.status} ${STATUS_TEXT[known.status] ?? "Bad Request"}\r\n` +
        "content-type: application/json\r\n" +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        "connection: close\r\n\r\n" +
        body,
    );
    // end() flushes then closes; destroy after a grace period if the peer never reads.
    setTimeout(() => socket.destroy(), 1000).unref();
    return;
  }
  socket.destroy();
}

/** Starts the server; see `Agent.serve`. */
export function serveAgent(agent: Servable, options: ServeOptions): Promise<ServeHandle> {
  const host = options.host ?? DEFAULT_SERVE_HOST;
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      // Node checks both timeouts on this period (default 30 s): keep it well under them.
      connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(headersTimeout / 2))),
    },
    (req, res) => onRequest(agent, req, res),
  );
  server.on("clientError", (error: Error & { code?: string }, socket: Socket) => {
    try {
      onClientError(agent, error, socket);
    } catch {
      socket.destroy();
    }
  });
  return new Promise<ServeHandle>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8000, host, () => {
      server.off("error", reject);
      // After listening, a server error (e.g. EMFILE on accept) is logged, never thrown.
      server.on("error", (error) =>
        agent.logger.warn(`agent '${agent.id}' server error`, { error: String(error) }),
      );
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      const url = `http://${shownHost}:${address.port}${agent.webhookPath}`;
      agent.logger.info?.(
        `rebuno agent '${agent.id}' listening on ${shownHost}:${address.port}${agent.webhookPath}`,
      );
      let closing: Promise<void> | undefined;
      resolve({
        url,
        host: address.address,
        port: address.port,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
            // A client still trickling a request must not hold the shutdown up.
            setTimeout(() => server.closeAllConnections(), 2000).unref();
          }).then(() => agent.close())),
      });
    });
  });
}
