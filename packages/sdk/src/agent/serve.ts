/** `agent.serve()`: a small `node:http` front for the agent's webhook handler. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../runtime/logger.js";
import { MAX_WEBHOOK_BYTES, TOO_LARGE, type WebhookAnswer } from "./webhook.js";

/** Options of `agent.serve()`. */
export interface ServeOptions {
  /** Interface to bind; default `0.0.0.0` (use `127.0.0.1` for local-only). */
  readonly host?: string;
  /** Port; `0` picks a free one (read it from the handle). Default 8000. */
  readonly port?: number;
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
  ): WebhookAnswer;
  close(): Promise<void>;
}

function send(res: ServerResponse, answer: WebhookAnswer): void {
  res.writeHead(answer.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(answer.body),
  });
  res.end(answer.body);
}

function onRequest(agent: Servable, req: IncomingMessage, res: ServerResponse): void {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > MAX_WEBHOOK_BYTES) {
    res.setHeader("connection", "close");
    send(res, TOO_LARGE);
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
      res.setHeader("connection", "close");
      send(res, TOO_LARGE);
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (refused) return;
    const signature = req.headers["rebuno-signature"];
    const answer = agent.receive(
      req.method ?? "GET",
      req.url ?? "/",
      Array.isArray(signature) ? signature[0] : signature,
      chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
    );
    send(res, answer);
  });
  req.on("error", () => res.destroy());
}

/** Starts the server; see `Agent.serve`. */
export function serveAgent(agent: Servable, options: ServeOptions): Promise<ServeHandle> {
  const host = options.host ?? "0.0.0.0";
  const server = createServer((req, res) => onRequest(agent, req, res));
  return new Promise<ServeHandle>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8000, host, () => {
      server.off("error", reject);
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
          }).then(() => agent.close())),
      });
    });
  });
}
