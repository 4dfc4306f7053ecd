import { createRequire } from "node:module";

// Read at runtime (not imported as JSON) so `rootDir: src` stays valid; the path is the same from
// src/ (tests) and dist/ (published build).
const pkg = createRequire(import.meta.url)("../package.json") as { name: string; version: string };

/** Version of `@rebuno/kernel-transport`, as published. */
export const TRANSPORT_VERSION: string = pkg.version;

/** The `User-Agent` product token this package always sends. */
export const TRANSPORT_USER_AGENT = `rebuno-kernel-transport/${pkg.version} node/${process.versions.node}`;

/**
 * `User-Agent` header value: the caller's product token(s) first (e.g. `rebuno-sdk/1.2.0`), then
 * ours, so kernel logs always show which transport version sent a request.
 */
export function userAgentHeader(callerUserAgent: string | undefined): string {
  const prefix = callerUserAgent?.trim();
  return prefix ? `${prefix} ${TRANSPORT_USER_AGENT}` : TRANSPORT_USER_AGENT;
}
