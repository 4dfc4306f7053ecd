import { RUNTIME_TOKEN } from "#engine";

/**
 * Version of `@rebuno/kernel-transport`, as published. A constant rather than a read of
 * package.json at run time, which browsers and workers cannot do; verify/tests/runtimes/versions.test.ts
 * fails when it differs from package.json.
 */
export const TRANSPORT_VERSION = "0.1.0";

/** The `User-Agent` product token this package always sends. */
export const TRANSPORT_USER_AGENT = `rebuno-kernel-transport/${TRANSPORT_VERSION} ${RUNTIME_TOKEN}`;

/**
 * `User-Agent` header value: the caller's product token(s) first (e.g. `rebuno-sdk/1.2.0`), then
 * ours, so kernel logs always show which transport version sent a request.
 */
export function userAgentHeader(callerUserAgent: string | undefined): string {
  const prefix = callerUserAgent?.trim();
  return prefix ? `${prefix} ${TRANSPORT_USER_AGENT}` : TRANSPORT_USER_AGENT;
}
