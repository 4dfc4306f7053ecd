/**
 * Webhook delivery loop and lease reaper (docs/protocol.md §7.1–7.3). The loop never spins: it sleeps
 * until the next row is due (at most `pollMs`, the production idle poll) and is woken on enqueue.
 * Claims happen in a transaction (attempt + 1, occurrence counters cleared); the HTTP delivery is
 * the only await, and its result is applied with the attempt as a fence.
 */
import { HEADER_EXECUTION_ID, HEADER_SIGNATURE, webhookSignature } from "@rebuno/protocol";
import { agentLeaseMs } from "../config.js";
import { WEBHOOK_EXTRA_HEADERS } from "../inferences.js";
import { StoreRowCorruptError } from "../store/sqlite-json.js";
import type { DispatchRow } from "../store/types.js";
import { isTerminalExecution } from "../store/types.js";
import { traceDelivery } from "../tracing.js";
import type { KernelContext } from "./context.js";
import { appendEvent } from "./events.js";
import { terminate } from "./lifecycle.js";
import { WebhookPoster } from "./webhook-post.js";

/** What a claimed row turned into. */
type Claimed =
  | {
      readonly kind: "deliver";
      readonly row: DispatchRow;
      readonly agentId: string;
      readonly url: string;
      readonly secret: string;
    }
  | { readonly kind: "done" };

/** Exponential backoff with jitter: `min(base·2^(attempt−1), max)` plus `[0, 0.25·d)`. */
export function backoffMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const d = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
  return d + random() * 0.25 * d;
}

/** The delivery loop of one kernel. */
export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private wakeScheduled = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** The delivery transport when the kernel was given no `fetch` (webhook-post.ts says why). */
  private readonly poster = new WebhookPoster();
  /**
   * Due rows whose claim read a damaged row of the SQLite store (`StoreRowCorruptError`, e.g. the
   * execution's input): reported once and skipped for the life of the process (the row can only be
   * repaired with the kernel stopped), so that they neither hold back the other deliveries nor keep
   * the loop spinning on a row that is always due.
   */
  private readonly damaged = new Set<string>();

  constructor(private readonly ctx: KernelContext) {}

  /** Start polling. */
  start(): void {
    this.schedule(0);
  }

  /** A row became due now: run a pass soon (coalesced; never inside the caller's transaction). */
  wake(): void {
    if (this.stopped || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.pass();
    });
  }

  /** Stop claiming and wait for deliveries in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    this.poster.close();
  }

  /** Resolves when every delivery started so far has settled (tests and `tick()`). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pass();
    }, delayMs);
    this.timer.unref();
  }

  /** Claim and start delivering every due row the free workers can take, then sleep. */
  pass(): void {
    if (this.stopped) return;
    const { store, config } = this.ctx;
    let failed = false;
    try {
      const free = config.concurrency - this.inFlight.size;
      if (free > 0) {
        for (const row of store.listDueDispatches(this.ctx.clock(), free + this.damaged.size)) {
          if (this.damaged.has(row.id)) continue;
          let claimed: Claimed;
          try {
            claimed = store.transaction(() => this.claim(row.id));
          } catch (err) {
            if (!StoreRowCorruptError.isInstance(err)) throw err;
            this.damaged.add(row.id);
            this.ctx.metrics.inc("rebuno_worker_errors_total", ["loop", "dispatch"]);
            this.ctx.reportError(err, "dispatch");
            continue;
          }
          if (claimed.kind === "deliver") this.track(this.deliver(claimed));
        }
      }
    } catch (err) {
      failed = true;
      this.ctx.metrics.inc("rebuno_worker_errors_total", ["loop", "dispatch"]);
      this.ctx.reportError(err, "dispatch");
    }
    const next = store.nextDispatchDueAt();
    let wait =
      next === undefined ? config.pollMs : Math.min(config.pollMs, Math.max(0, next - this.ctx.clock()));
    // Still due now after a failed pass, or a skipped damaged row: poll instead of spinning.
    if (wait === 0 && (failed || this.damaged.size > 0)) wait = config.pollMs;
    // A due row with no free worker waits for a delivery to finish (track() wakes the loop).
    this.schedule(this.inFlight.size >= config.concurrency ? config.pollMs : wait);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => {
      this.inFlight.delete(p);
      this.wake();
    });
  }

  /** docs/protocol.md §7.1: claim (attempt + 1, clear counters), then discard / exhaust / deliver. */
  private claim(id: string): Claimed {
    const { store } = this.ctx;
    const row = store.getDispatch(id);
    const now = this.ctx.clock();
    if (
      row === undefined ||
      (row.status !== "pending" && row.status !== "failed") ||
      row.nextAttemptAt > now
    ) {
      return { kind: "done" };
    }
    const execution = store.getExecution(row.executionId);
    const agent = execution === undefined ? undefined : store.getAgent(execution.agentId);
    const claimed: DispatchRow = {
      ...row,
      status: "in_flight",
      attempt: row.attempt + 1,
      lockedBy: this.ctx.replicaId,
      lockedAt: now,
      leaseMs: agentLeaseMs(this.ctx.config, agent?.leaseTimeoutSeconds),
    };
    store.updateDispatch(claimed);
    store.clearOccurrences(row.id);
    if (execution === undefined || isTerminalExecution(execution.status)) {
      store.updateDispatch({ ...claimed, status: "exhausted" });
      if (execution !== undefined) {
        appendEvent(this.ctx, row.executionId, "dispatch.discarded", dispatchPayload(claimed, "exhausted"));
      }
      this.ctx.metrics.inc("rebuno_dispatch_deliveries_total", ["outcome", "discarded"]);
      return { kind: "done" };
    }
    if (claimed.attempt > claimed.maxAttempts) {
      // Caps redelivery after lease expiries, which never pass through the failure branch.
      this.exhaust(claimed);
      return { kind: "done" };
    }
    if (agent === undefined) {
      // The agent was deleted: the delivery cannot be made; count it as a failed attempt.
      this.applyFailure(claimed, { error_class: "agent_missing", error: "agent is not registered" });
      return { kind: "done" };
    }
    return { kind: "deliver", row: claimed, agentId: agent.id, url: agent.webhookUrl, secret: agent.secret };
  }

  private exhaust(row: DispatchRow): void {
    const execution = this.ctx.store.getExecution(row.executionId);
    if (execution === undefined) return;
    if (terminate(this.ctx, execution, { status: "failed", reason: "dispatch_exhausted" })) {
      this.ctx.metrics.inc("rebuno_dispatch_exhausted_total");
    }
  }

  private async deliver(claim: Extract<Claimed, { kind: "deliver" }>): Promise<void> {
    const { row, url, secret } = claim;
    const body = JSON.stringify({
      execution_id: row.executionId,
      dispatch_id: row.id,
      dispatch_attempt: row.attempt,
      lease_timeout_seconds: row.leaseMs / 1000,
    });
    const headers: Record<string, string> = {
      "content-type": "application/json",
      [HEADER_SIGNATURE]: webhookSignature(secret, body),
    };
    if (WEBHOOK_EXTRA_HEADERS.includes("execution_id")) headers[HEADER_EXECUTION_ID] = row.executionId;
    // A webhook acknowledges the claim and the writes that queued it (a new execution, a resume):
    // never send one for writes a crash could still lose (group commit, see Store.whenDurable).
    try {
      await this.ctx.store.whenDurable();
    } catch (err) {
      // The claim was rolled back with its batch; the row is still due and will be claimed again.
      this.ctx.metrics.inc("rebuno_worker_errors_total", ["loop", "dispatch"]);
      this.ctx.reportError(err, "dispatch");
      return;
    }
    let failure: DeliveryFailure | undefined;
    let status: number | undefined;
    const span = traceDelivery({
      executionId: row.executionId,
      agentId: claim.agentId,
      dispatchId: row.id,
      attempt: row.attempt,
      url,
    });
    const fetch = this.ctx.fetch;
    const timeoutMs = this.ctx.config.dispatchTimeoutMs;
    try {
      if (fetch === undefined) {
        status = await this.poster.post(url, headers, body, timeoutMs);
        if (status < 200 || status >= 300) failure = httpFailure(status);
      } else {
        // An injected fetch (tests deliver in process): the same awaits as always, so the order
        // of the acknowledgement against the agent's first requests does not move.
        const request = new Request(url, {
          method: "POST",
          headers,
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(timeoutMs),
        });
        const response = await fetch(request);
        status = response.status;
        if (response.status < 200 || response.status >= 300) failure = httpFailure(response.status);
        // Drain so keep-alive sockets are reused and in-process handlers finish cleanly.
        await response.arrayBuffer().catch(() => undefined);
      }
    } catch (err) {
      failure = failure ?? networkFailure(err);
    }
    span?.end(failure, status);
    try {
      this.ctx.store.transaction(() =>
        failure === undefined ? this.applyAck(row) : this.applyFailure(row, failure),
      );
    } catch (err) {
      this.ctx.metrics.inc("rebuno_worker_errors_total", ["loop", "dispatch"]);
      this.ctx.reportError(err, "dispatch");
    }
  }

  /** 2xx: `dispatch.acked`, unless the attempt was superseded or the execution already ended. */
  private applyAck(row: DispatchRow): void {
    const current = this.ctx.store.getDispatch(row.id);
    const execution = this.ctx.store.getExecution(row.executionId);
    if (current === undefined || current.attempt !== row.attempt || execution === undefined) return;
    if (isTerminalExecution(execution.status)) return;
    appendEvent(this.ctx, row.executionId, "dispatch.acked", dispatchPayload(current, "acked"));
    this.ctx.metrics.inc("rebuno_dispatch_deliveries_total", ["outcome", "acked"]);
  }

  /**
   * Non-2xx / error: `dispatch.failed` with its cause, then retry with backoff or exhaust (fenced
   * by attempt). The Go kernel's payload is the first four fields; the cause fields are additive.
   */
  private applyFailure(row: DispatchRow, failure: DeliveryFailure): void {
    const current = this.ctx.store.getDispatch(row.id);
    if (current === undefined || current.attempt !== row.attempt || current.status !== "in_flight") return;
    const execution = this.ctx.store.getExecution(row.executionId);
    if (execution === undefined || isTerminalExecution(execution.status)) return;
    const last = current.attempt >= current.maxAttempts;
    const { backoffBaseMs, backoffMaxMs } = this.ctx.config;
    const nextAttemptAt = last
      ? undefined
      : this.ctx.clock() + backoffMs(current.attempt, backoffBaseMs, backoffMaxMs);
    // Short fields first, the sentence last: one-line views (`rebuno exec watch`) cut at the end.
    const { error, ...cause } = failure;
    appendEvent(this.ctx, row.executionId, "dispatch.failed", {
      ...dispatchPayload(current, "failed"),
      ...cause,
      max_attempts: current.maxAttempts,
      ...(nextAttemptAt === undefined ? {} : { next_attempt_at: new Date(nextAttemptAt).toISOString() }),
      error,
    });
    this.ctx.metrics.inc("rebuno_dispatch_deliveries_total", ["outcome", "failed"]);
    // The status code is the cause worth telling apart (401/403: wrong secret; 5xx: agent broken).
    const byCause = failure.http_status === undefined ? failure.error_class : `http_${failure.http_status}`;
    this.ctx.metrics.inc("rebuno_dispatch_failures_total", ["cause", byCause]);
    if (nextAttemptAt === undefined) {
      this.exhaust(current);
      return;
    }
    this.ctx.store.updateDispatch({ ...current, status: "failed", lockedBy: undefined, nextAttemptAt });
  }

  /** docs/protocol.md §7.3 reaper: expired `in_flight` leases go back to `pending`, due now, attempt unchanged. */
  reap(): number {
    const expired = this.ctx.store.listExpiredLeases(this.ctx.clock());
    for (const row of expired) {
      this.ctx.store.transaction(() => {
        const current = this.ctx.store.getDispatch(row.id);
        if (current === undefined || current.status !== "in_flight" || current.attempt !== row.attempt)
          return;
        this.ctx.store.updateDispatch({
          ...current,
          status: "pending",
          lockedBy: undefined,
          nextAttemptAt: this.ctx.clock(),
        });
      });
      this.ctx.metrics.inc("rebuno_dispatch_reclaimed_total");
    }
    if (expired.length > 0) this.wake();
    return expired.length;
  }
}

/**
 * Why a delivery failed, as recorded in `dispatch.failed` (snake_case, like the rest of the payload).
 * `error_class` tells an agent that answered (`http_status`; 401/403 = it refused our signature,
 * usually a wrong secret) from one that could not be reached (`connection_refused`, `timeout`,
 * `network_error`) or no longer exists (`agent_missing`).
 */
export interface DeliveryFailure {
  readonly error_class: "http_status" | "connection_refused" | "timeout" | "network_error" | "agent_missing";
  readonly http_status?: number;
  readonly error: string;
}

function httpFailure(status: number): DeliveryFailure {
  const hint =
    status === 401 || status === 403
      ? " (the agent refused the webhook signature: check that its secret matches the registered one)"
      : "";
  return { error_class: "http_status", http_status: status, error: `agent answered HTTP ${status}${hint}` };
}

/**
 * Classify a delivery rejection: `fetch` (undici) puts the socket error (with its `code`) in
 * `cause`; the `node:http` poster rejects with the socket error itself.
 */
export function networkFailure(err: unknown): DeliveryFailure {
  const name = err instanceof Error ? err.name : "";
  if (name === "TimeoutError" || name === "AbortError") {
    return { error_class: "timeout", error: "the agent did not answer within the dispatch timeout" };
  }
  type SocketError = { code?: unknown; message?: unknown };
  const cause: SocketError | undefined = !(err instanceof Error)
    ? undefined
    : typeof (err as SocketError).code === "string"
      ? err
      : (err.cause as SocketError | undefined);
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  if (code === "ECONNREFUSED") {
    return { error_class: "connection_refused", error: "connection refused: is the agent running?" };
  }
  if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "ETIMEDOUT") {
    return { error_class: "timeout", error: `the agent did not answer in time (${code})` };
  }
  const detail =
    typeof cause?.message === "string" ? cause.message : err instanceof Error ? err.message : String(err);
  return { error_class: "network_error", error: code === undefined ? detail : `${code}: ${detail}` };
}

function dispatchPayload(row: DispatchRow, status: string): Record<string, unknown> {
  return { dispatch_id: row.id, execution_id: row.executionId, status, attempt: row.attempt };
}
