import { createHash } from "node:crypto";
import { ConfigurationError } from "@rebuno/protocol";
import type { IdGenerator } from "./ids.js";
import type { SqliteStoreOptions } from "./store/sqlite.js";
import type { Store } from "./store/types.js";

/** A `fetch`-compatible function (global `fetch`, or an in-process agent's handler). */
export type FetchLike = (input: Request) => Promise<Response>;

/**
 * Allowed origins: `"*"` (any) or exact origins such as `http://localhost:5173`. Declared with the
 * options (not in http/cors.ts) so that config, which engine/ reads, imports nothing from http/.
 */
export type CorsOrigins = "*" | readonly string[];

/** An agent to register at start-up (docs/protocol.md §13.1 provisioning, camelCase). */
export interface AgentProvision {
  readonly id: string;
  readonly webhookUrl: string;
  readonly secret: string;
  /** Values under 10 are ignored (kernel default used), as in the production kernel. */
  readonly leaseTimeoutSeconds?: number | undefined;
  /** Policy bundle YAML; compiled at start-up (a bad bundle fails the start). */
  readonly policy?: string | undefined;
}

/** A scoped API key to create at start-up, with a fixed token (handy for local setups). */
export interface ApiKeyProvision {
  readonly name: string;
  readonly token: string;
  readonly scopes: readonly string[];
}

/** Dispatch (webhook delivery) settings; defaults follow docs/protocol.md §7 and §13.2. */
export interface DispatchOptions {
  /** Delivers webhooks. Default: a node:http POST on a keep-alive agent (engine/webhook-post.ts). Tests deliver in process without sockets. */
  readonly fetch?: FetchLike | undefined;
  /** Claims before `dispatch_exhausted` (default 5, env `REBUNO_DISPATCH_MAX_ATTEMPTS`). */
  readonly maxAttempts?: number | undefined;
  /** Default lease in seconds (default 120, env `REBUNO_DISPATCH_LEASE_TIMEOUT`). */
  readonly leaseTimeoutSeconds?: number | undefined;
  /** Backoff base after a failed delivery (default 1000 ms). */
  readonly backoffBaseMs?: number | undefined;
  /** Backoff cap (default 30 000 ms). */
  readonly backoffMaxMs?: number | undefined;
  /** Idle poll interval of the delivery loop (default 250 ms). */
  readonly pollMs?: number | undefined;
  /** Webhook request timeout (default 30 000 ms, env `REBUNO_DISPATCH_TIMEOUT`). */
  readonly timeoutMs?: number | undefined;
  /** Concurrent deliveries (default 8, env `REBUNO_DISPATCH_CONCURRENCY`). */
  readonly concurrency?: number | undefined;
  /** Lease reaper interval (default `min(2 s, lease / 4)`). */
  readonly reapIntervalMs?: number | undefined;
}

/** Options of {@link startDevKernel}. */
export interface DevKernelOptions {
  readonly agents?: readonly AgentProvision[] | undefined;
  /**
   * Full-access bearer token (env `REBUNO_BEARER_TOKEN`). When `devMode` is false, this or at least
   * one of `apiKeys` is required (otherwise no request could ever be authorized).
   */
  readonly bootstrapToken?: string | undefined;
  readonly apiKeys?: readonly ApiKeyProvision[] | undefined;
  /**
   * `"memory"` (default), `{ sqlite: path }` plus optional {@link SqliteStoreOptions}
   * (`synchronous`, `quickCheck`), or a ready {@link Store}.
   */
  readonly store?: "memory" | ({ readonly sqlite: string } & SqliteStoreOptions) | Store | undefined;
  /** Epoch milliseconds (default `Date.now`). */
  readonly clock?: (() => number) | undefined;
  /** New ids (default: UUIDv7 from `clock`). */
  readonly idGenerator?: IdGenerator | undefined;
  readonly dispatch?: DispatchOptions | undefined;
  /** Default approval timeout (default 15 min, env `REBUNO_APPROVAL_TIMEOUT`). */
  readonly approvalTimeoutMs?: number | undefined;
  /** Execution deadline after creation (default none, env `REBUNO_DEADLINE_TIMEOUT`). */
  readonly deadlineTimeoutMs?: number | undefined;
  /** Cadence of approval expiry, deadlines, subagent repair and retention (default 1000 ms). */
  readonly sweepIntervalMs?: number | undefined;
  /** Delete terminal executions older than this (default 24 h, env `REBUNO_RETENTION`; 0 = keep). */
  readonly retentionMs?: number | undefined;
  /**
   * Keep at most this many executions (default: no limit). Beyond it, each sweep deletes the
   * oldest terminal executions (by last update; a session only once all its turns are terminal).
   * Executions still running are never deleted, so the count exceeds the cap while more than that
   * many are live. With the memory store every retained execution costs memory (≈ 30 KB for 20
   * steps, see docs); the SQLite store keeps them on disk, in its tables.
   */
  readonly maxRetainedExecutions?: number | undefined;
  /** Judge service URL; enables `decision: judge` rules (see the policy engine). */
  readonly judgeEndpoint?: string | undefined;
  /**
   * Anonymous requests get full access; supplied tokens are still checked (default true). While on,
   * `listen()` refuses a non-loopback address unless told `allowAnonymous` (see `exposure.ts`).
   */
  readonly devMode?: boolean | undefined;
  /**
   * Let browser pages on these origins call the kernel (`"*"` = any origin): preflight `OPTIONS`
   * requests are answered and answers carry `Access-Control-Allow-Origin`; allowed request headers
   * are `Authorization` and `Content-Type`. Off by default.
   */
  readonly cors?: CorsOrigins | undefined;
  /**
   * A directory of static files to serve beside the API: `GET /` answers its `index.html`, `GET
   * /<name>` its other text files (read once at start). `rebuno-dev` passes the web console here.
   */
  readonly staticAssets?: string | undefined;
  /** Receives background errors (default: `console.error`). */
  readonly onError?: ((error: unknown, where: string) => void) | undefined;
}

/** Options with defaults applied. */
export interface ResolvedConfig {
  readonly devMode: boolean;
  /** sha256 of the bootstrap token, compared in constant time (`http/auth.ts`). */
  readonly bootstrapTokenHash: Buffer | undefined;
  readonly maxAttempts: number;
  readonly leaseTimeoutMs: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly pollMs: number;
  readonly dispatchTimeoutMs: number;
  readonly concurrency: number;
  readonly reapIntervalMs: number;
  readonly approvalTimeoutMs: number;
  readonly deadlineTimeoutMs: number | undefined;
  readonly sweepIntervalMs: number;
  readonly retentionMs: number;
  readonly maxRetainedExecutions: number | undefined;
  readonly judgeEndpoint: string | undefined;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
}

/** sha256 of a bearer token as bytes: equal lengths for a constant-time comparison. */
export function tokenDigest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Apply defaults and check the numbers. */
export function resolveConfig(options: DevKernelOptions): ResolvedConfig {
  const d = options.dispatch ?? {};
  const devMode = options.devMode ?? true;
  const bootstrapToken = options.bootstrapToken === "" ? undefined : options.bootstrapToken;
  if (!devMode && bootstrapToken === undefined && (options.apiKeys ?? []).length === 0) {
    throw new ConfigurationError(
      "devMode: false needs a bootstrapToken or at least one of apiKeys: without one, no request could be authorized",
    );
  }
  const leaseTimeoutMs = positive(d.leaseTimeoutSeconds, 120, "dispatch.leaseTimeoutSeconds") * 1000;
  const retentionMs = options.retentionMs ?? 24 * 3_600_000;
  if (!Number.isFinite(retentionMs) || retentionMs < 0) throw new RangeError("retentionMs must be ≥ 0");
  return {
    devMode,
    bootstrapTokenHash: bootstrapToken === undefined ? undefined : tokenDigest(bootstrapToken),
    maxAttempts: Math.floor(positive(d.maxAttempts, 5, "dispatch.maxAttempts")),
    leaseTimeoutMs,
    backoffBaseMs: positive(d.backoffBaseMs, 1000, "dispatch.backoffBaseMs"),
    backoffMaxMs: positive(d.backoffMaxMs, 30_000, "dispatch.backoffMaxMs"),
    pollMs: positive(d.pollMs, 250, "dispatch.pollMs"),
    dispatchTimeoutMs: positive(d.timeoutMs, 30_000, "dispatch.timeoutMs"),
    concurrency: Math.floor(positive(d.concurrency, 8, "dispatch.concurrency")),
    reapIntervalMs: positive(d.reapIntervalMs, Math.min(2000, leaseTimeoutMs / 4), "dispatch.reapIntervalMs"),
    approvalTimeoutMs: positive(options.approvalTimeoutMs, 15 * 60_000, "approvalTimeoutMs"),
    deadlineTimeoutMs:
      options.deadlineTimeoutMs === undefined
        ? undefined
        : positive(options.deadlineTimeoutMs, 0, "deadlineTimeoutMs"),
    sweepIntervalMs: positive(options.sweepIntervalMs, 1000, "sweepIntervalMs"),
    retentionMs,
    maxRetainedExecutions:
      options.maxRetainedExecutions === undefined
        ? undefined
        : Math.floor(positive(options.maxRetainedExecutions, 0, "maxRetainedExecutions")),
    judgeEndpoint: options.judgeEndpoint === "" ? undefined : options.judgeEndpoint,
  };
}

/** The lease an agent gets: its own `lease_timeout_seconds` when ≥ 10, else the kernel default. */
export function agentLeaseMs(config: ResolvedConfig, leaseTimeoutSeconds: number | undefined): number {
  return leaseTimeoutSeconds !== undefined && leaseTimeoutSeconds >= 10
    ? leaseTimeoutSeconds * 1000
    : config.leaseTimeoutMs;
}
