/**
 * The `default` side of the `#engine` import (package.json "imports"): browsers, Deno, Bun and
 * Cloudflare-style workers. No undici, no `node:*`, no `Buffer`: the fetch engine over the
 * runtime's own `fetch`, and a timer-based event-loop stall monitor. engine-node.ts exports the
 * same names.
 */
import type { Engine } from "./engine.js";
import { FetchEngine } from "./fetch-engine.js";

export { sharedLoopMonitor } from "./loop-monitor-timer.js";

interface RuntimeGlobals {
  readonly Deno?: { readonly version?: { readonly deno?: string } };
  readonly Bun?: { readonly version?: string };
  readonly process?: { readonly versions?: { readonly node?: string } };
}

function runtimeToken(): string {
  const g = globalThis as RuntimeGlobals;
  if (g.Deno?.version?.deno !== undefined) return `deno/${g.Deno.version.deno}`;
  if (g.Bun?.version !== undefined) return `bun/${g.Bun.version}`;
  // Node itself loads engine-node.ts; this is a bundle built for the web but run on Node.
  if (g.process?.versions?.node !== undefined) return `node/${g.process.versions.node}`;
  return "web";
}

/** Runtime token for `User-Agent` (browsers do not let scripts set it; others send it). */
export const RUNTIME_TOKEN = runtimeToken();

/** The engine for an http(s) base URL without an injected `fetch`: the runtime's own `fetch`. */
export function createDefaultEngine(origin: string, _connections: number): Engine {
  // Called through a closure so `fetch` keeps the global as `this` (workers require it).
  return new FetchEngine(origin, (request) => fetch(request));
}

const encoder = new TextEncoder();

/** Body bytes as sent: a string becomes UTF-8; an empty body is no body. */
export function bodyBytes(body: string | Uint8Array | undefined): Uint8Array | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string") return body === "" ? undefined : encoder.encode(body);
  return body.length === 0 ? undefined : body;
}
