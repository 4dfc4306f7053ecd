/**
 * Connection bookkeeping for the `node:http` server, so `close()` is prompt.
 *
 * `server.close()` stops accepting and (Node ≥ 19) closes the connections that are idle *at that
 * moment*; a connection that becomes idle later — e.g. the one an SSE response was using, once
 * close() ends the stream — is then held open until `keepAliveTimeout` (5 s) expires, and
 * `server.close`'s callback waits for it. So we count requests in flight per socket and, once
 * draining began, destroy each socket as soon as its last response is done. Requests in flight
 * are never cut: their sockets are destroyed only after their responses finished.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Close a socket without losing what was written: `end()` flushes the queued bytes (a response
 * that just finished may still sit in the socket's buffer) and sends FIN; destroy once flushed,
 * so a client that never closes its side cannot hold the server open.
 */
function release(socket: Socket): void {
  socket.end(() => socket.destroy());
}

/** Tracks the sockets of one server. Attach right after `createServer`. */
export class ConnectionTracker {
  /** Requests in flight per open socket (0 = idle keep-alive connection). */
  private readonly inFlight = new Map<Socket, number>();
  private draining = false;

  constructor(server: Server) {
    server.on("connection", (socket: Socket) => {
      this.inFlight.set(socket, 0);
      socket.once("close", () => this.inFlight.delete(socket));
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => this.onRequest(req, res));
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
    // Answers written while draining tell the client not to reuse the connection.
    if (this.draining) res.shouldKeepAlive = false;
    res.once("close", () => {
      const n = (this.inFlight.get(socket) ?? 1) - 1;
      if (!this.inFlight.has(socket)) return;
      this.inFlight.set(socket, n);
      if (this.draining && n === 0) release(socket);
    });
  }

  /**
   * Begin draining (call after `server.close()`): idle sockets are destroyed now, busy ones as
   * soon as their last response is done.
   */
  drain(): void {
    this.draining = true;
    for (const [socket, n] of this.inFlight) if (n === 0) release(socket);
  }

  /** Open sockets (for tests and diagnostics). */
  get size(): number {
    return this.inFlight.size;
  }
}
