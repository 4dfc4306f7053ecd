/**
 * Abort listeners shared per signal. Adding and removing an EventTarget listener for every
 * request cost 3–6 µs of CPU per request on the benchmark VM (A/B in docs/design/transport.md
 * §2), about as much as the rest of the engine's own work. Here each signal gets one listener,
 * kept while requests use it; a request only joins and leaves a Set.
 *
 * A listener is removed once its signal has been idle through a whole sweep (1–2 s). While it is
 * registered, the `listening` set holds the signal (and Node itself keeps an `AbortSignal.any` or
 * `AbortSignal.timeout` signal alive while it has an abort listener), so a listener must not
 * outlive the requests that needed it by much; the watch itself is keyed weakly by its signal.
 */

/** Something in flight that stops when its signal aborts. */
export interface Cancellable {
  cancel(reason: unknown): void;
}

const SWEEP_MS = 1_000;

/** The shared listener of one signal; {@link watchAbort} hands it out for {@link unwatchAbort}. */
export class Watch {
  readonly calls = new Set<Cancellable>();
  listening = false;
  /** A call joined since the last sweep. */
  touched = false;

  constructor(readonly signal: AbortSignal) {}

  /** The signal aborted: cancel everything in flight on it. */
  handleEvent(): void {
    const reason = this.signal.reason;
    const calls = [...this.calls];
    this.calls.clear();
    unlisten(this);
    for (const call of calls) call.cancel(reason);
  }
}

const watches = new WeakMap<AbortSignal, Watch>();
const listening = new Set<Watch>();
let sweeper: NodeJS.Timeout | undefined;

function unlisten(w: Watch): void {
  if (!w.listening) return;
  w.listening = false;
  w.signal.removeEventListener("abort", w);
  listening.delete(w);
  if (listening.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

function sweep(): void {
  for (const w of listening) {
    if (w.calls.size === 0 && !w.touched) unlisten(w);
    else w.touched = false;
  }
}

/**
 * Cancel `call` if `signal` aborts before {@link unwatchAbort}. The caller has checked that the
 * signal is not aborted yet, and keeps the returned watch to leave it.
 */
export function watchAbort(signal: AbortSignal, call: Cancellable): Watch {
  let w = watches.get(signal);
  if (w === undefined) {
    w = new Watch(signal);
    watches.set(signal, w);
  }
  w.calls.add(call);
  w.touched = true;
  if (!w.listening) {
    w.listening = true;
    signal.addEventListener("abort", w);
    listening.add(w);
    // Unref'd: a watch must never keep the process alive.
    sweeper ??= setInterval(sweep, SWEEP_MS).unref();
  }
  return w;
}

/** `call` finished; its signal no longer needs to reach it. */
export function unwatchAbort(watch: Watch, call: Cancellable): void {
  watch.calls.delete(call);
}
