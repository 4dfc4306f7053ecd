/**
 * Requests Node's HTTP parser refuses (malformed request line or headers, headers over the size
 * limit, a malformed chunked body, a request not received in time) never reach the core, and node's own answer is a bare
 * status line. This `clientError` listener answers them with the protocol's JSON error envelope
 * instead, then closes the connection without a reset: the parser cannot resynchronise, so the
 * rest of what the client sends is read and thrown away until it closes its side (or a short grace
 * period ends).
 */
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { JSON_HEADERS } from "./respond.js";

/** How long a refused connection is kept open for the client to read the answer and close. */
export const CLIENT_ERROR_LINGER_MS = 2000;

interface Refusal {
  readonly status: number;
  readonly reason: string;
  readonly code: string;
  readonly message: string;
}

/** Node's parser error codes → answer; anything else is a malformed request (400). */
function refusalFor(code: string): Refusal {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        reason: "Request Header Fields Too Large",
        code: "validation_error",
        message: "validation error: request header fields too large",
      };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        reason: "Request Timeout",
        code: "timeout",
        message: "request not received in time",
      };
    default:
      return {
        status: 400,
        reason: "Bad Request",
        code: "validation_error",
        message: `validation error: malformed HTTP request (${code})`,
      };
  }
}

const refused = new WeakSet<Duplex>();

/** The raw bytes of the JSON error answer for a parser error code. */
export function clientErrorAnswer(code: string): string {
  const r = refusalFor(code);
  const body = `${JSON.stringify({ code: r.code, message: r.message })}\n`;
  return (
    `HTTP/1.1 ${r.status} ${r.reason}\r\n` +
    `content-type: ${JSON_HEADERS["content-type"]}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    "connection: close\r\n\r\n" +
    body
  );
}

/** The server's `clientError` listener. */
export function onClientError(error: Error & { code?: string }, socket: Duplex): void {
  const code = error.code ?? "";
  // Node reports every later chunk on a refused connection again; the first answer stands.
  if (refused.has(socket)) return;
  refused.add(socket);
  // A peer that reset or vanished: no one to answer.
  if (code === "ECONNRESET" || code === "EPIPE" || !socket.writable) {
    socket.destroy();
    return;
  }
  // An earlier request's answer on this connection is pending (e.g. body bytes sent without any
  // length framing, read as a second, malformed request): bytes written now would be read as its
  // answer. Node keeps the pending response here. Stop the parser, let that answer go out first,
  // then refuse the garbage, as Go's server does; give up after the linger period.
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  // The error is inside the pending request's own body (an invalid chunk size, say): its body will
  // never end, so nothing would ever answer it. Refuse it now; the adapter never serves it.
  if (pending?.req !== undefined && !pending.req.complete && !pending.headersSent) {
    answerAndLinger(socket, code);
    return;
  }
  if (pending !== undefined && pending !== null) {
    socket.removeAllListeners("data");
    socket.on("data", discard);
    const giveUp = setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS);
    giveUp.unref();
    pending.once("finish", () => {
      clearTimeout(giveUp);
      if (socket.writable) answerAndLinger(socket, code);
      else socket.destroy();
    });
    pending.once("close", () => {
      if (!pending.writableFinished) socket.destroy();
    });
    return;
  }
  answerAndLinger(socket, code);
}

/** Write the JSON refusal, then read and discard until the client closes (bounded). */
function answerAndLinger(socket: Duplex, code: string): void {
  // Stop feeding the failed parser; discard what still arrives so closing sends no reset.
  socket.removeAllListeners("data");
  socket.on("data", discard);
  socket.on("error", discard);
  const linger = setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS);
  linger.unref();
  socket.once("close", () => clearTimeout(linger));
  socket.once("end", () => socket.destroy());
  socket.end(clientErrorAnswer(code));
  socket.resume();
}

function discard(): void {}
