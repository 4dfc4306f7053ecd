/**
 * Event-loop stall detection, portable (Node, Deno, Bun, workers: only `setInterval` and
 * `performance.now`). A sampling timer due every 20 ms measures how late it fires: a tick that
 * comes 320 ms after the previous one means the loop could run nothing for about 300 ms.
 *
 * Why not `monitorEventLoopDelay`: its histogram is read on a separate report timer, so a stall
 * could be read before the histogram recorded it, be discarded by the reset that followed, or be
 * lost when the last listener unsubscribed first (a run that ends right after a blocking tool).
 * Here the stall is reported by the very tick that measures it (the first timer that runs after
 * the stall), and unsubscribing takes a final sample first, so a stall that just ended is always
 * reported to the listener that was there during it.
 */

/** A stall being reported to every listener at once; keepers offer to name what was running. */
export interface LoopStall {
  /** How long the loop was blocked, ms. */
  readonly blockedMs: number;
  /**
   * Offer a report of this stall. After every listener ran, the monitor calls `report` of the
   * strongest offer (ties: the latest-started step), passing all offers of that strength, so one
   * stall gives one warning however many leases were held.
   */
  offer(claim: StallClaim): void;
}

/** A listener's offer to report a stall. */
export interface StallClaim {
  /** 2: its step started during the stall; 1: its step was running; 0: no step was running. */
  readonly strength: number;
  /** When that step started (ties of strength go to the latest start: it ran last before the block). */
  readonly startedAt: number;
  report(peers: readonly StallClaim[]): void;
}

/** Reports event-loop stalls. */
export interface LoopDelaySource {
  /**
   * Start receiving stall reports (`stall` is given by monitors that coordinate one report per
   * stall); returns the unsubscribe function.
   */
  subscribe(listener: (blockedMs: number, stall?: LoopStall) => void): () => void;
}

const RESOLUTION_MS = 20;
// Below this, lateness is ordinary timer jitter on a busy machine; listeners are not bothered.
const MIN_REPORT_MS = 50;

type Timer = ReturnType<typeof setInterval>;

interface DenoTimers {
  readonly Deno?: { unrefTimer?(id: number): void };
}

// A monitor must never keep a process alive: Node/Bun timers have unref(), Deno has unrefTimer.
function unref(timer: Timer): void {
  const t = timer as { unref?: () => void };
  if (typeof t.unref === "function") t.unref();
  else if (typeof timer === "number") (globalThis as DenoTimers).Deno?.unrefTimer?.(timer);
}

class Stall implements LoopStall {
  private readonly claims: StallClaim[] = [];
  constructor(readonly blockedMs: number) {}

  offer(claim: StallClaim): void {
    this.claims.push(claim);
  }

  settle(): void {
    let best = -1;
    for (const c of this.claims) best = Math.max(best, c.strength);
    const peers = this.claims.filter((c) => c.strength === best).sort((a, b) => b.startedAt - a.startedAt);
    peers[0]?.report(peers);
  }
}

/**
 * One process-wide monitor shared by every LeaseKeeper: a stall blocks the whole process, so a
 * sampler per execution would only multiply timers. It runs only while somebody listens.
 */
class SharedLoopMonitor implements LoopDelaySource {
  private readonly listeners = new Set<(blockedMs: number, stall?: LoopStall) => void>();
  private timer: Timer | undefined;
  private last = 0;

  subscribe(listener: (blockedMs: number, stall?: LoopStall) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    return () => {
      if (!this.listeners.has(listener)) return;
      // A stall that ended since the last tick is reported before this listener leaves.
      this.sample();
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  private start(): void {
    this.last = performance.now();
    this.timer = setInterval(() => this.sample(), RESOLUTION_MS);
    unref(this.timer);
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sample(): void {
    const now = performance.now();
    // A tick is due every RESOLUTION_MS; the rest of the gap is time the loop ran nothing else.
    const blockedMs = now - this.last - RESOLUTION_MS;
    this.last = now;
    if (blockedMs < MIN_REPORT_MS) return;
    const stall = new Stall(blockedMs);
    for (const listener of [...this.listeners]) {
      try {
        listener(blockedMs, stall);
      } catch {
        // One failing listener must not cost the others their report.
      }
    }
    try {
      stall.settle();
    } catch {
      // A failing logger inside a report must not escape a timer.
    }
  }
}

/** The process-wide event-loop stall monitor. */
export const sharedLoopMonitor: LoopDelaySource = new SharedLoopMonitor();
