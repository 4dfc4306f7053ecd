import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks";

/** Reports the longest event-loop stall seen since the previous report, in ms. */
export interface LoopDelaySource {
  /** Start receiving reports; returns the unsubscribe function. */
  subscribe(listener: (maxDelayMs: number) => void): () => void;
}

const RESOLUTION_MS = 20;
const REPORT_EVERY_MS = 500;

/**
 * One process-wide `monitorEventLoopDelay` histogram shared by every LeaseKeeper: a stall blocks
 * the whole process, so a histogram per execution would only multiply the sampling timers. It
 * runs only while somebody listens. The report timer is unref'd, so it never keeps a process alive;
 * it fires right after a stall ends, which is when a warning can be logged at all.
 */
class SharedLoopMonitor implements LoopDelaySource {
  private readonly listeners = new Set<(maxDelayMs: number) => void>();
  private histogram: IntervalHistogram | undefined;
  private timer: NodeJS.Timeout | undefined;

  subscribe(listener: (maxDelayMs: number) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    return () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.stop();
    };
  }

  private start(): void {
    const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    h.enable();
    this.histogram = h;
    this.timer = setInterval(() => this.report(), REPORT_EVERY_MS);
    this.timer.unref();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.histogram?.disable();
    this.histogram = undefined;
    this.timer = undefined;
  }

  private report(): void {
    const h = this.histogram;
    if (h === undefined) return;
    // The histogram records how late its own 20 ms sampling timer fired, so `max` is the longest
    // stall plus the resolution.
    const maxMs = Math.max(0, h.max / 1e6 - RESOLUTION_MS);
    h.reset();
    if (maxMs <= 0) return;
    for (const listener of [...this.listeners]) listener(maxMs);
  }
}

/** The process-wide event-loop delay monitor. */
export const sharedLoopMonitor: LoopDelaySource = new SharedLoopMonitor();
