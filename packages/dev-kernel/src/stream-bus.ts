/**
 * In-process fan-out of stream deltas (docs/protocol.md §4.5): best effort, no replay, and a bounded
 * buffer per subscriber so a slow reader never blocks the agent that publishes.
 */

/** Deltas a subscriber may hold before new ones are dropped for it. */
export const SUBSCRIBER_BUFFER = 64;

/** Where a subscriber's frames go; `write` returns false when the socket is congested. */
export interface StreamSink {
  write(frame: string): boolean;
}

class Subscriber {
  readonly queue: string[] = [];
  congested = false;
  scheduled = false;
  /**
   * Set by `close()`. A flush may already be scheduled then (a delta or the terminal notice pushed
   * in the same turn), and its sink may be ended by the time it runs: writing to an ended
   * `ServerResponse` emits an unhandled "error" that ended `rebuno-dev` with exit code 1 when
   * SIGTERM closed the kernel in that window.
   */
  closed = false;
  constructor(readonly sink: StreamSink) {}

  push(frame: string, always = false): void {
    // Full: drop for this subscriber only; the terminal notice is never dropped (it is the last).
    if (!always && this.queue.length >= SUBSCRIBER_BUFFER) return;
    this.queue.push(frame);
    this.schedule();
  }

  schedule(): void {
    if (this.scheduled || this.congested) return;
    this.scheduled = true;
    // Deliver after the publishing request finished: publishing stays O(1) per subscriber.
    setImmediate(() => this.flush());
  }

  flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    while (this.queue.length > 0 && !this.congested) {
      if (!this.sink.write(this.queue.shift()!)) this.congested = true;
    }
  }
}

/** A live subscription; `drain()` resumes delivery after the sink reported congestion. */
export interface Subscription {
  close(): void;
  drain(): void;
}

/** Stream-delta bus keyed by execution id. */
export class StreamBus {
  private readonly subscribers = new Map<string, Set<Subscriber>>();

  /** Subscribe to deltas published for `executionId` from now on. */
  subscribe(executionId: string, sink: StreamSink): Subscription {
    const sub = new Subscriber(sink);
    let set = this.subscribers.get(executionId);
    if (set === undefined) {
      set = new Set();
      this.subscribers.set(executionId, set);
    }
    set.add(sub);
    return {
      close: () => {
        sub.closed = true;
        sub.queue.length = 0;
        const s = this.subscribers.get(executionId);
        if (s === undefined) return;
        s.delete(sub);
        if (s.size === 0) this.subscribers.delete(executionId);
      },
      drain: () => {
        sub.congested = false;
        sub.schedule();
      },
    };
  }

  /** Publish one delta; returns how many subscribers accepted it (dropped ones excluded). */
  publish(executionId: string, stepId: string, seq: number, data: string): number {
    const set = this.subscribers.get(executionId);
    if (set === undefined) return 0;
    const frame = `data: ${JSON.stringify({ step_id: stepId, seq, data })}\n\n`;
    let accepted = 0;
    for (const sub of set) {
      if (sub.queue.length < SUBSCRIBER_BUFFER) accepted++;
      sub.push(frame);
    }
    return accepted;
  }

  /**
   * Tell the execution's subscribers it reached a terminal status: one named SSE event
   * (`event: execution.terminal`, data `{"execution_id":…,"status":…}`), which delta readers skip
   * and `Client.waitForTerminal` wakes on instead of polling. Delivered after the current
   * transaction (setImmediate), and only a hint: readers confirm with `GET /v0/executions/{id}`.
   */
  announceTerminal(executionId: string, status: string): void {
    const set = this.subscribers.get(executionId);
    if (set === undefined) return;
    const frame = `event: execution.terminal\ndata: ${JSON.stringify({ execution_id: executionId, status })}\n\n`;
    for (const sub of set) sub.push(frame, true);
  }

  /** Number of live subscribers (all executions). */
  get size(): number {
    let n = 0;
    for (const s of this.subscribers.values()) n += s.size;
    return n;
  }
}
