import type { FetchLike, RetryOptions, TransportLogger } from "@rebuno/kernel-transport";
import { ConfigurationError, type KernelProtocol } from "@rebuno/protocol";

/** Environment variable read when `baseUrl` is not passed. */
export const ENV_URL = "REBUNO_URL";
/** Environment variable read when `apiKey` is not passed. */
export const ENV_API_KEY = "REBUNO_API_KEY";

/** Options of {@link Client}. Every field is optional. */
export interface ClientOptions {
  /** Kernel base URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept). Falls back to `REBUNO_URL`. */
  readonly baseUrl?: string | undefined;
  /**
   * Bearer token (the bootstrap token or an API key). Falls back to `REBUNO_API_KEY`. An explicit
   * `""` means "send no `Authorization` header" and does not fall back.
   */
  readonly apiKey?: string | undefined;
  /** Per-attempt time budget in ms; an SSE stream is bounded only until it connects. Default 35 000. */
  readonly timeoutMs?: number | undefined;
  /** The official SDK's name for {@link timeoutMs} (also milliseconds; pass one of the two). */
  readonly timeout?: number | undefined;
  /**
   * Send requests through this `fetch` (an in-process kernel's handler, MSW, a proxy-aware fetch)
   * instead of the built-in keep-alive connection pool.
   */
  readonly fetch?: FetchLike | undefined;
  /** Receives retry notices and warnings (e.g. a malformed stream frame that was skipped). */
  readonly logger?: TransportLogger | undefined;
  /** Backoff for retried idempotent requests (default: 4 tries, 250 ms doubling to 4 s). */
  readonly retry?: Partial<RetryOptions> | undefined;
  /**
   * Kernel protocol generation: `"v1"` (the newest documented protocol, default) or `"legacy"`
   * (the Go kernel snapshot: no sessions, subagents, forks, policy tests or API keys; Go-style
   * agent keys). Falls back to `REBUNO_PROTOCOL`. Never guessed from the kernel's answers.
   */
  readonly protocol?: KernelProtocol | undefined;
  /** Environment to read the fallbacks from; defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The connection settings after environment fallbacks. */
export interface ResolvedConnection {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v === undefined || v === "" ? undefined : v;
}

export function processEnv(): Readonly<Record<string, string | undefined>> {
  // `process` is absent in browsers and some edge runtimes: there are no fallbacks there.
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env ?? {};
}

/**
 * Apply the `REBUNO_URL` / `REBUNO_API_KEY` fallbacks. A missing base URL throws
 * `ConfigurationError` here, at construction, instead of failing on the first request. The URL
 * itself and `timeoutMs` are validated by the shared HTTP core.
 */
export function resolveConnection(options: ClientOptions): ResolvedConnection {
  const env = options.env ?? processEnv();
  const baseUrl = nonEmpty(options.baseUrl) ?? nonEmpty(env[ENV_URL]);
  if (baseUrl === undefined) {
    throw new ConfigurationError("Client baseUrl is required (set REBUNO_URL or pass baseUrl)");
  }
  const apiKey = options.apiKey !== undefined ? nonEmpty(options.apiKey) : nonEmpty(env[ENV_API_KEY]);
  return { baseUrl, apiKey };
}

/** `timeoutMs`, or its official-SDK alias `timeout` (both in ms); both at once is refused. */
export function resolveTimeoutMs(options: ClientOptions): number | undefined {
  if (options.timeoutMs !== undefined && options.timeout !== undefined) {
    throw new ConfigurationError("pass timeoutMs or timeout (the same setting in ms), not both");
  }
  return options.timeoutMs ?? options.timeout;
}
