/**
 * The `node` side of the `#engine` import (package.json "imports"): what differs between Node and
 * the runtimes without undici's pool or `node:perf_hooks`. engine-web.ts exports the same names.
 */
import type { Engine } from "./engine.js";
import { UndiciEngine } from "./undici-engine.js";

export { sharedLoopMonitor } from "./loop-monitor.js";

/** Runtime token for `User-Agent`. */
export const RUNTIME_TOKEN = `node/${process.versions.node}`;

/** The engine for an http(s) base URL without an injected `fetch`: undici's keep-alive pool. */
export function createDefaultEngine(origin: string, connections: number): Engine {
  return new UndiciEngine(origin, connections);
}

/** Body bytes as sent: a string becomes UTF-8; an empty body is no body. */
export function bodyBytes(body: string | Uint8Array | undefined): Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string") return body === "" ? undefined : Buffer.from(body, "utf8");
  if (body.length === 0) return undefined;
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length);
}
