import type { RateLimiter } from "@rebuno/policy";
import type { FetchLike, ResolvedConfig } from "../config.js";
import type { IdGenerator } from "../ids.js";
import type { Metrics } from "../metrics.js";
import type { Store } from "../store/types.js";
import type { StreamBus } from "../stream-bus.js";
import type { PolicyCache } from "./policies.js";

/** Everything request handlers and background loops share. */
export interface KernelContext {
  readonly store: Store;
  readonly clock: () => number;
  readonly newId: IdGenerator;
  readonly config: ResolvedConfig;
  readonly policies: PolicyCache;
  readonly limiter: RateLimiter;
  readonly bus: StreamBus;
  readonly metrics: Metrics;
  /** Open SSE streams: `end` (closes the response) → `close` (stops producing). */
  readonly openStreams: Map<() => void, () => void>;
  /**
   * Webhook transport when one was injected (`dispatch.fetch`: tests deliver in process); when
   * undefined the dispatcher posts with `node:http` (engine/webhook-post.ts).
   */
  readonly fetch: FetchLike | undefined;
  /** Identifies this kernel in `locked_by`. */
  readonly replicaId: string;
  /** Nudge the delivery loop: a dispatch became due. Safe to call inside a transaction. */
  wakeDispatcher(): void;
  /** True once `close()` began (readiness answers 503 from then on). */
  isClosing(): boolean;
  /** Report an error from background work. */
  reportError(error: unknown, where: string): void;
}
