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

// The socket a response was counted on (its own `socket` is detached before it emits "close").
const kCountedSocket = Symbol("countedSocket");

type CountedResponse = ServerResponse & { [kCountedSocket]?: Socket };

/**
 * Tracks the sockets of one server. Attach right after `createServer` (without a request
 * listener), then serve requests through {@link ConnectionTracker.listener}.
 */
export class ConnectionTracker {
  /** Requests in flight per open socket (0 = idle keep-alive connection). */
  private readonly inFlight = new Map<Socket, number>();
  private draining = false;
  // One shared "close" listener for every response instead of a closure (and a `once` wrapper)
  // per request: this runs on every request of the agent hot path.
  private readonly onResponseClose: (this: CountedResponse) => void;

  constructor(server: Server) {
    server.on("connection", (socket: Socket) => {
      this.inFlight.set(socket, 0);
      socket.once("close", () => this.inFlight.delete(socket));
    });
    const tracker = this;
    this.onResponseClose = function (this: CountedResponse): void {
      const socket = this[kCountedSocket]!;
      const n = (tracker.inFlight.get(socket) ?? 1) - 1;
      if (!tracker.inFlight.has(socket)) return;
      tracker.inFlight.set(socket, n);
      if (tracker.draining && n === 0) release(socket);
    };
  }

  /**
   * The server's one `request` listener: counts the request, then hands it to `serve`. (One
   * listener rather than two: `emit` copies the listener array when there are several.)
   */
  listener(
    serve: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      this.onRequest(req, res);
      serve(req, res);
    };
  }

  private onRequest(req: IncomingMessage, res: CountedResponse): void {
    const socket = req.socket;
    this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
    // Answers written while draining tell the client not to reuse the connection.
    if (this.draining) res.shouldKeepAlive = false;
    res[kCountedSocket] = socket;
    res.on("close", this.onResponseClose);
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
