/**
 * The `rebuno-dev` process log: one line per step (and per execution transition) of every
 * execution, as the kernel records it. It reads the kernel's own store between requests (never
 * inside a transaction), so it only ever prints committed-to-memory history, and it never writes.
 */
import { isTerminalExecution, type Store } from "@rebuno/dev-kernel";

/** A running timeline; `stop()` prints what is left and ends the polling. */
export interface TimelinePrinter {
  stop(): void;
}

export interface TimelineOptions {
  /** Poll interval (default 200 ms). */
  readonly intervalMs?: number | undefined;
  /** Executions looked at for new arrivals per poll, newest first (default 50). */
  readonly window?: number | undefined;
  /** A poll that threw (the store became unavailable): the timeline stops after reporting it. */
  readonly onError?: ((error: unknown) => void) | undefined;
}

const EXCERPT = 80;
/** Events worth a line: step outcomes and execution transitions (the rest is in `exec events`). */
const SHOWN = new Set([
  "execution.created",
  "execution.blocked",
  "execution.resumed",
  "execution.completed",
  "execution.failed",
  "execution.cancelled",
  "step.succeeded",
  "step.failed",
  "step.denied",
  "step.cancelled",
  "step.awaiting_approval",
  "step.rate_limited",
  "dispatch.failed",
  "dispatch.discarded",
]);
const TERMINAL_EVENTS = new Set(["execution.completed", "execution.failed", "execution.cancelled"]);

function excerpt(json: string | undefined): string {
  if (json === undefined) return "";
  const flat = json.replace(/\s+/g, " ");
  return flat.length <= EXCERPT ? flat : `${flat.slice(0, EXCERPT - 1)}…`;
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

/** Text of a step error: its `message` or `reason`, else the JSON. */
function errorText(json: string | undefined): string {
  if (json === undefined) return "";
  try {
    const e = JSON.parse(json) as { message?: unknown; reason?: unknown };
    if (typeof e.message === "string") return excerpt(e.message);
    if (typeof e.reason === "string") return excerpt(e.reason);
  } catch {
    // Not JSON after all: show it as it is.
  }
  return excerpt(json);
}

/** One line for one event, or undefined when the event is not shown. */
export function timelineLine(
  store: Store,
  executionId: string,
  agentId: string,
  type: string,
  payloadJson: string,
  at: number,
): string | undefined {
  if (!SHOWN.has(type)) return undefined;
  const p = JSON.parse(payloadJson) as Record<string, unknown>;
  const head = `${clock(at)}  ${executionId.slice(-8)}  ${agentId}`;
  const what = type.slice(type.indexOf(".") + 1).replace(/_/g, " ");
  if (type.startsWith("execution.")) {
    let detail = "";
    if (type === "execution.created")
      detail = `id ${executionId}${typeof p.session === "string" ? ` session ${p.session}` : ""}`;
    else if (type === "execution.completed") detail = excerpt(JSON.stringify(p.output ?? null));
    else if (typeof p.reason === "string") detail = excerpt(p.reason);
    return `${head}  execution ${what}  ${detail}`.trimEnd();
  }
  if (type.startsWith("dispatch.")) {
    // Every recorded detail of the failed delivery (cause, HTTP status, next retry…) as key=value.
    const extras = Object.entries(p)
      .filter(([k]) => !["dispatch_id", "execution_id", "status", "attempt"].includes(k))
      .map(([k, v]) => ` ${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join("");
    return `${head}  dispatch ${what}  attempt ${String(p.attempt ?? "?")}${extras}`;
  }
  const step = typeof p.step_id === "string" ? store.getStep(executionId, p.step_id) : undefined;
  const target = `${String(p.step_type ?? step?.kind ?? "step")} ${String(p.target ?? step?.target ?? "?")}`;
  const ms =
    step?.startedAt !== undefined && step.completedAt !== undefined
      ? `  ${step.completedAt - step.startedAt}ms`
      : "";
  let detail = "";
  if (type === "step.succeeded") detail = excerpt(step?.resultJson ?? "null");
  else if (type === "step.awaiting_approval" || type === "step.rate_limited")
    detail = typeof p.rule_id === "string" ? `rule ${p.rule_id}` : "";
  else detail = errorText(step?.errorJson);
  const indeterminate =
    type === "step.failed" && step?.errorJson?.includes('"reason":"indeterminate"') === true;
  return `${head}  ${target}  ${indeterminate ? "indeterminate" : what}${ms}  ${detail}`.trimEnd();
}

/**
 * Print every execution's steps as they are recorded. History that exists when it starts (a
 * reopened SQLite store) is not replayed: only what happens from now on.
 */
export function startTimeline(
  store: Store,
  write: (line: string) => void,
  options: TimelineOptions = {},
): TimelinePrinter {
  const window = options.window ?? 50;
  // Execution id → last event seq printed (or skipped); `done` once its terminal event went by.
  const tracked = new Map<string, { agentId: string; lastSeq: number; done: boolean }>();
  for (const e of store.listExecutions({ limit: window })) {
    tracked.set(e.id, {
      agentId: e.agentId,
      lastSeq: store.lastEventSeq(e.id),
      done: isTerminalExecution(e.status),
    });
  }

  const poll = (): void => {
    const recent = store.listExecutions({ limit: window });
    for (const e of recent)
      if (!tracked.has(e.id)) tracked.set(e.id, { agentId: e.agentId, lastSeq: 0, done: false });
    const inWindow = new Set(recent.map((e) => e.id));
    for (const [id, t] of tracked) {
      if (t.done) {
        if (!inWindow.has(id)) tracked.delete(id); // finished and scrolled out: forget it
        continue;
      }
      // Bounded per poll: a burst is printed over a few polls instead of blocking the loop.
      for (const event of store.listEvents(id, t.lastSeq, 500)) {
        t.lastSeq = event.seq;
        const line = timelineLine(store, id, t.agentId, event.type, event.payloadJson, event.occurredAt);
        if (line !== undefined) write(line);
        if (TERMINAL_EVENTS.has(event.type)) t.done = true;
      }
      // Deleted by retention while we watched.
      if (store.getExecution(id) === undefined) tracked.delete(id);
    }
  };
  const timer = setInterval(() => {
    try {
      poll();
    } catch (error) {
      clearInterval(timer);
      options.onError?.(error);
    }
  }, options.intervalMs ?? 200);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      try {
        poll();
      } catch (error) {
        options.onError?.(error);
      }
    },
  };
}
