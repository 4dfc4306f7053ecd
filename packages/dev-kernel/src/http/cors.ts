/**
 * Cross-origin access for browser clients (off unless the kernel is started with `cors`).
 *
 * Wraps the core handler, so the `node:http` adapter, the `fetch` adapter and `kernel.handle` all
 * answer the same. A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from
 * an allowed origin is answered `204` here and never reaches the router; every other answer to an
 * allowed origin gets `Access-Control-Allow-Origin`. Requests from other origins pass through
 * untouched (the browser then refuses to hand the answer to the page).
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { CorsOrigins } from "../config.js";
import { type CoreHandler, type CoreRequest, type CoreResponse, headerValue } from "./types.js";

/** Methods the kernel's routes use. */
const ALLOWED_METHODS = "GET, POST, PUT, DELETE";
/** Bearer auth and JSON bodies: all a browser client sends beyond the CORS-safelisted headers. */
const ALLOWED_HEADERS = "Authorization, Content-Type";
/** Browsers cache a preflight answer this long (seconds). */
const PREFLIGHT_MAX_AGE = "600";

/** Checks the option: `"*"` or a non-empty list of origins (`scheme://host[:port]`, no path). */
export function validateCorsOrigins(origins: CorsOrigins): CorsOrigins {
  if (origins === "*") return origins;
  if (!Array.isArray(origins) || origins.length === 0) {
    throw new ConfigurationError('cors must be "*" or a non-empty list of origins');
  }
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = typeof origin === "string" ? new URL(origin) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || parsed.origin !== origin) {
      throw new ConfigurationError(
        `cors: ${JSON.stringify(origin)} is not an origin (expected scheme://host[:port], e.g. http://localhost:5173)`,
      );
    }
  }
  return origins;
}

/** Wraps `handle` with CORS answers for `origins` (validate them first). */
export function withCors(handle: CoreHandler, origins: CorsOrigins): CoreHandler {
  const allowed = origins === "*" ? undefined : new Set(origins);
  const allowOriginFor = (req: CoreRequest): string | undefined => {
    const origin = headerValue(req.headers, "origin");
    if (origin === undefined) return undefined;
    if (allowed === undefined) return "*";
    return allowed.has(origin) ? origin : undefined;
  };
  // With a list, the answer depends on the request's Origin: caches must key on it.
  const vary: Record<string, string> = allowed === undefined ? {} : { vary: "Origin" };

  return async (req) => {
    const allowOrigin = allowOriginFor(req);
    if (allowOrigin === undefined) return handle(req);
    if (req.method === "OPTIONS" && headerValue(req.headers, "access-control-request-method") !== undefined) {
      return {
        status: 204,
        headers: {
          "access-control-allow-origin": allowOrigin,
          "access-control-allow-methods": ALLOWED_METHODS,
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": PREFLIGHT_MAX_AGE,
          ...vary,
        },
        body: "",
      };
    }
    const response: CoreResponse = await handle(req);
    const headers = { ...response.headers, "access-control-allow-origin": allowOrigin, ...vary };
    return { ...response, headers };
  };
}
