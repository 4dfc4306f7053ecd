/**
 * `node:http` adapter: reads the body with a hard cap (answering 413 without reading the rest),
 * keeps repeated headers visible (from `rawHeaders`), and writes the core's answer directly —
 * no `Request`/`Response` objects on the socket path.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ValidationError } from "@rebuno/protocol";
import { BODY_TOO_LARGE_MESSAGE, BODY_TOO_LARGE_STATUS } from "../inferences.js";
import { errorResponse } from "./respond.js";
import type { CoreBodyResponse, CoreHandler, CoreHeaders, CoreResponse } from "./types.js";

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

/** The 413 answer (see `inferences.ts`). */
export function tooLarge(): CoreBodyResponse {
  return errorResponse(new ValidationError(BODY_TOO_LARGE_MESSAGE, { status: BODY_TOO_LARGE_STATUS }), {
    connection: "close",
  });
}

function writeBody(res: ServerResponse, r: CoreBodyResponse): void {
  const headers: Record<string, string | number> = { ...r.headers };
  if (r.status !== 204) headers["content-length"] = Buffer.byteLength(r.body);
  res.writeHead(r.status, headers);
  res.end(r.status === 204 ? undefined : r.body);
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

/** A `request` listener for `http.createServer` that drives the core handler. */
export function createNodeListener(
  handle: CoreHandler,
  maxBodyBytes: number,
  onError: (err: unknown) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const reject = (): void => {
      // Stop reading; the connection is closed once the answer is out.
      req.pause();
      req.removeAllListeners("data");
      const r = tooLarge();
      res.on("finish", () => req.destroy());
      writeBody(res, r);
    };
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > maxBodyBytes) {
      reject();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let rejected = false;
    req.on("data", (chunk: Buffer) => {
      if (rejected) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        rejected = true;
        reject();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", () => {
      rejected = true;
    });
    req.on("end", () => {
      if (rejected) return;
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      handle({
        method: req.method ?? "GET",
        target: req.url ?? "/",
        headers: headersFromRaw(req.rawHeaders),
        body,
      }).then(
        (r) => writeResponse(res, r),
        (err: unknown) => {
          onError(err);
          if (!res.headersSent) res.writeHead(500).end();
        },
      );
    });
  };
}
