/**
 * `node:http` adapter: reads the body with a hard cap, keeps repeated headers visible (from
 * `rawHeaders`), and writes the core's answer directly — no `Request`/`Response` objects on the
 * socket path.
 *
 * A body over the cap is answered `400 validation_error` (protocol: reading past the 10 MiB limit
 * fails JSON decoding), after the rest of the body has been read and thrown away: closing a socket
 * with unread bytes makes the kernel send a TCP reset, and the client would see that instead of
 * the answer. Draining is bounded ({@link DISCARD_LIMIT_BYTES}, {@link DISCARD_IDLE_MS}); a client
 * that sends `Expect: 100-continue` is answered before it sends the body at all.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ValidationError } from "@rebuno/protocol";
import { BODY_TOO_LARGE_MESSAGE, BODY_TOO_LARGE_STATUS } from "../inferences.js";
import { errorResponse, JSON_HEADERS } from "./respond.js";
import type { CoreBodyResponse, CoreHandler, CoreHeaders, CoreResponse } from "./types.js";

/**
 * Total bytes of an oversized request read (and thrown away) before it is answered. Past this the
 * answer goes out at once and the connection is closed; the client may then see a reset.
 */
export const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;

/** An oversized request whose body stops arriving for this long is answered without the rest. */
export const DISCARD_IDLE_MS = 1000;

/** Lowercase header map from `rawHeaders`; repeated headers become arrays. */
export function headersFromRaw(raw: readonly string[]): CoreHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (typeof prev === "string") out[name] = [prev, value];
    else prev.push(value);
  }
  return out;
}

/**
 * The request's headers as the core wants them. `node:http` has already built `req.headers` for
 * every request (it checks `Host` and `Expect`), and when no header name repeats that object is
 * exactly what {@link headersFromRaw} would build: lowercase names, each with its one value
 * (`set-cookie` aside, which node always makes an array). Repeats are visible there only as fewer
 * names than raw pairs — node joins or drops them — and then the raw list is walked instead, so
 * duplicate `Rebuno-*` / `Authorization` headers are still seen and refused.
 */
export function requestHeaders(req: IncomingMessage): CoreHeaders {
  const parsed = req.headers;
  const raw = req.rawHeaders;
  if (parsed["set-cookie"] === undefined && Object.keys(parsed).length * 2 === raw.length) {
    return parsed as CoreHeaders;
  }
  return headersFromRaw(raw);
}

/**
 * Requests node would answer itself with a bare status line (no JSON), so the server is created
 * with `requireHostHeader: false` and a `checkExpectation` listener, and they are refused here.
 * They are answered after their body was read, like any request, so the close sends no reset.
 */
export function headerRefusal(req: IncomingMessage): CoreBodyResponse | undefined {
  // HTTP/1.1 requires a Host header (RFC 9112, section 3.2): a request without one is answered 400.
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return errorResponse(new ValidationError("validation error: HTTP/1.1 request without a Host header"), {
      connection: "close",
    });
  }
  if (req.headers.expect !== undefined && unmetExpectations.has(req)) {
    return errorResponse(
      new ValidationError(
        `validation error: unsupported Expect header ${JSON.stringify(req.headers.expect)}`,
        {
          status: 417,
        },
      ),
      { connection: "close" },
    );
  }
  return undefined;
}

// Requests whose `Expect` header is not `100-continue` (node's `checkExpectation` event).
const unmetExpectations = new WeakSet<IncomingMessage>();

/** `checkExpectation` listener: the request is read as usual, then refused 417 by `headerRefusal`. */
export function createExpectationListener(
  serve: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    unmetExpectations.add(req);
    serve(req, res);
  };
}

/** The answer to a body over the limit (see `inferences.ts`). */
export function tooLarge(): CoreBodyResponse {
  return errorResponse(new ValidationError(BODY_TOO_LARGE_MESSAGE, { status: BODY_TOO_LARGE_STATUS }), {
    connection: "close",
  });
}

function writeBody(res: ServerResponse, r: CoreBodyResponse): void {
  if (r.status === 204) {
    res.writeHead(204, r.headers);
    res.end();
    return;
  }
  // A flat `[name, value, …]` list: node writes the same header block as from an object, without
  // the copy of `r.headers` and its key listing. Same names, values and order as before.
  const length = Buffer.byteLength(r.body);
  const h = r.headers;
  let flat: (string | number)[];
  if (h === JSON_HEADERS) {
    flat = ["content-type", JSON_HEADERS["content-type"]!, "content-length", length];
  } else {
    flat = [];
    for (const name of Object.keys(h)) flat.push(name, h[name]!);
    flat.push("content-length", length);
  }
  res.writeHead(r.status, flat);
  res.end(r.body);
}

function writeResponse(res: ServerResponse, r: CoreResponse): void {
  if (!("stream" in r)) {
    writeBody(res, r);
    return;
  }
  res.writeHead(r.status, r.headers);
  res.flushHeaders();
  const control = r.stream.open(
    (chunk) => res.write(chunk),
    () => res.end(),
  );
  res.on("drain", () => control.drain());
  res.on("close", () => control.close());
}

/**
 * A `request` listener for `http.createServer` that drives the core handler.
 *
 * Reading the body: a request that arrived whole with its headers (every agent request, in
 * practice) is complete by the `setImmediate` after the `request` event — node's parser has pushed
 * the body and its end into `req` while handling that read — so the immediate takes the buffered
 * body with one `read()` and serves it. That skips flowing mode (resume, `data` events, the `end`
 * tick) on the hot path. (`process.nextTick` would be too early: node runs ticks after each parser
 * callback, i.e. before the body is parsed.) Anything still arriving is read with `data`/`end`
 * events, with the size cap checked per chunk, as before.
 */
export function createNodeListener(
  handle: CoreHandler,
  maxBodyBytes: number,
  onError: (err: unknown) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const serve = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const refusal = headerRefusal(req);
    if (refusal !== undefined) {
      writeBody(res, refusal);
      return;
    }
    handle({
      method: req.method ?? "GET",
      target: req.url ?? "/",
      headers: requestHeaders(req),
      body,
    }).then(
      (r) => writeResponse(res, r),
      (err: unknown) => {
        onError(err);
        if (!res.headersSent) res.writeHead(500).end();
      },
    );
  };

  const readStreaming = (req: IncomingMessage, res: ServerResponse): void => {
    // Bodies almost always arrive in one chunk: keep it without an array.
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let size = 0;
    let rejected = false;
    req.on("data", (chunk: Buffer) => {
      if (rejected) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        rejected = true;
        first = undefined;
        more = undefined;
        refuseOversized(req, res, size);
        return;
      }
      if (first === undefined) first = chunk;
      else (more ??= [first]).push(chunk);
    });
    req.on("error", () => {
      rejected = true;
    });
    req.on("end", () => {
      if (rejected) return;
      serve(req, res, more !== undefined ? Buffer.concat(more, size) : (first ?? EMPTY_BODY));
    });
  };

  const readWhole = (req: IncomingMessage, res: ServerResponse): void => {
    if (!req.complete || req.destroyed || req.readableFlowing !== null) {
      readStreaming(req, res);
      return;
    }
    const body = req.readableLength === 0 ? EMPTY_BODY : (req.read() as Buffer);
    if (body.length > maxBodyBytes) {
      refuseOversized(req, res, body.length);
      return;
    }
    serve(req, res, body);
  };

  return (req, res) => {
    // An aborted request emits "error"; without a listener that would be thrown.
    req.on("error", ignore);
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > maxBodyBytes) {
      refuseOversized(req, res, 0);
      return;
    }
    setImmediate(readWhole, req, res);
  };
}

function ignore(): void {}

const EMPTY_BODY = Buffer.alloc(0);

/**
 * `checkContinue` listener (`Expect: 100-continue`): a declared body over the limit is refused
 * before the client sends it; otherwise the client is told to continue and `serve` reads as usual.
 */
export function createContinueListener(
  serve: (req: IncomingMessage, res: ServerResponse) => void,
  maxBodyBytes: number,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const declared = req.headers["content-length"];
    if (declared === undefined || !(Number(declared) > maxBodyBytes)) res.writeContinue();
    else unsent.add(req);
    serve(req, res);
  };
}

// Requests refused before their body was asked for (no `100 Continue` sent): nothing to drain.
const unsent = new WeakSet<IncomingMessage>();

/**
 * Answer a request whose body is over the limit. The rest of the body is read and discarded
 * first, so that the answer is followed by an orderly close (not a reset); `alreadyRead` bytes
 * count towards {@link DISCARD_LIMIT_BYTES}.
 */
function refuseOversized(req: IncomingMessage, res: ServerResponse, alreadyRead: number): void {
  // The streaming reader's own listeners stay attached but ignore everything once it refused.
  let discarded = alreadyRead;
  let answered = false;
  const answer = (): void => {
    if (answered) return;
    answered = true;
    clearTimeout(idle);
    req.removeListener("data", onData);
    req.removeListener("end", answer);
    // The parser may have refused the body's framing meanwhile and answered on the socket itself
    // (`onClientError`): nothing more may be written then.
    if (res.headersSent || !res.socket?.writable) return;
    // `connection: close`: node ends the connection once the answer is written.
    writeBody(res, tooLarge());
  };
  const onData = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT_BYTES) answer();
    else idle.refresh();
  };
  const idle = setTimeout(answer, DISCARD_IDLE_MS);
  res.once("close", () => clearTimeout(idle));
  if (req.complete || unsent.has(req)) {
    answer();
    return;
  }
  req.on("data", onData);
  req.on("end", answer);
  req.resume();
}
