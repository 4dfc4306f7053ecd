/**
 * An execution's timeline: its events as they land, each enriched with what a person wants to see
 * next to it (the step's decision, duration and a result or error excerpt). Shared by
 * `rebuno exec watch` and the tour, so both print the same lines.
 */
import type { Client } from "@rebuno/client";
import type { Event, Execution, Step } from "@rebuno/protocol";

/** One line of a timeline. */
export interface TimelineEntry {
  readonly executionId: string;
  readonly seq: number;
  /** Event type as the kernel names it, e.g. `step.succeeded`. */
  readonly type: string;
  readonly occurredAt: string;
  /** What the event is about: a step's target, or `execution`, `dispatch`, `approval`. */
  readonly subject: string;
  /** Step kind (`tool_call`, `local`, `llm_call`) for step events. */
  readonly kind?: string | undefined;
  readonly stepId?: string | undefined;
  /** The decision or status the event records: `allowed`, `denied`, `succeeded`, `blocked`… */
  readonly outcome: string;
  /** Step run time (started → completed) for settled steps. */
  readonly durationMs?: number | undefined;
  /** Result, error, reason or rule, shortened to one line. */
  readonly detail?: string | undefined;
  /** The event's payload as sent. */
  readonly payload: Readonly<Record<string, unknown>>;
}

/** Longest detail kept on a line. */
export const EXCERPT_CHARS = 96;

/** One-line excerpt of a JSON value (strings unquoted), cut at `max` characters. */
export function excerpt(value: unknown, max = EXCERPT_CHARS): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  const flat = text.replace(/\s+/g, " ");
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The human message inside a step error (`{message}`, `{reason}`, or the JSON itself). */
export function errorText(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const e = error as Record<string, unknown>;
    const text = str(e.message) ?? str(e.reason) ?? str(e.error);
    if (text !== undefined) return text;
  }
  return excerpt(error);
}

function durationOf(step: Step): number | undefined {
  if (step.startedAt === undefined || step.completedAt === undefined) return undefined;
  const ms = Date.parse(step.completedAt) - Date.parse(step.startedAt);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

const DISPATCH_IDS = new Set(["dispatch_id", "execution_id", "status", "attempt", "dispatch_attempt"]);
const SETTLED_STEP = new Set(["step.succeeded", "step.failed", "step.denied", "step.cancelled"]);

/**
 * Describe one event. `step` is the step the event is about, read after the event (for results
 * and durations of settled steps); `execution` is the execution, read after a terminal event.
 */
export function describeEvent(event: Event, step?: Step, execution?: Execution): TimelineEntry {
  const p = event.payload;
  const [family = "", what = event.type] = event.type.split(/\.(.*)/s);
  const stepTarget = str(p.target);
  const base = {
    executionId: event.executionId,
    seq: event.eventSeq,
    type: event.type,
    occurredAt: event.occurredAt,
    payload: p,
    outcome: what.replace(/_/g, " "),
  };
  if (family === "step") {
    let detail: string | undefined;
    let durationMs: number | undefined;
    if (event.type === "step.allowed" || event.type === "step.awaiting_approval") {
      const rule = str(p.rule_id);
      detail = rule === undefined ? undefined : `rule ${rule}`;
    } else if (event.type === "step.denied") {
      detail = errorText(step?.error ?? p.error);
    } else if (event.type === "step.rate_limited") {
      detail = str(p.reason);
    } else if (SETTLED_STEP.has(event.type) && step !== undefined) {
      durationMs = durationOf(step);
      detail =
        event.type === "step.succeeded" ? excerpt(step.result ?? null) : excerpt(errorText(step.error));
    } else if (event.type === "step.failed") {
      detail = excerpt(errorText(p.error));
    }
    // An at_most_once step orphaned by a crash is failed with reason "indeterminate": say so.
    const error = (step?.error ?? p.error) as { reason?: unknown } | undefined;
    const indeterminate = event.type === "step.failed" && error?.reason === "indeterminate";
    return {
      ...base,
      outcome: indeterminate ? "indeterminate" : base.outcome,
      subject: stepTarget ?? "step",
      kind: str(p.step_type) ?? step?.kind,
      stepId: str(p.step_id),
      durationMs,
      detail,
    };
  }
  if (family === "execution") {
    let detail: string | undefined;
    if (event.type === "execution.completed") detail = excerpt(execution?.output ?? p.output ?? null);
    else detail = str(p.reason) ?? execution?.failureReason;
    const session = str(p.session);
    if (event.type === "execution.created" && session !== undefined) detail = `session ${session}`;
    return { ...base, subject: "execution", detail: detail === undefined ? undefined : excerpt(detail) };
  }
  if (family === "dispatch") {
    // The dev kernel names it `attempt`; accept the webhook's `dispatch_attempt` spelling too.
    const n = typeof p.attempt === "number" ? p.attempt : p.dispatch_attempt;
    const attempt = typeof n === "number" && n >= 1 ? `attempt ${n}` : undefined;
    // Whatever else a kernel records about a delivery (an error, an HTTP status, the next retry…)
    // is shown as key=value, so a kernel that records more shows more without a change here.
    const extras = Object.entries(p)
      .filter(([k]) => !DISPATCH_IDS.has(k))
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    const detail = [attempt, extras.join(" ")].filter((x) => x !== undefined && x !== "").join(": ");
    return { ...base, subject: "dispatch", detail: detail === "" ? undefined : excerpt(detail) };
  }
  if (family === "approval") {
    const who = str(p.decided_by);
    const why = str(p.rationale);
    const detail = [str(p.approval_id), who && `by ${who}`, why && `"${why}"`].filter(Boolean).join(" ");
    return { ...base, subject: "approval", detail: detail === "" ? undefined : excerpt(detail) };
  }
  return { ...base, subject: family === "" ? event.type : family };
}

/** Options of {@link followTimeline}. */
export interface FollowTimelineOptions {
  readonly afterSeq?: number | undefined;
  readonly pollMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Follow an execution's event log until it is terminal and read to the end, yielding one entry
 * per event. Settled steps are read back (one `GET …/steps/{id}`) for their result and duration.
 */
export async function* followTimeline(
  client: Client,
  executionId: string,
  options: FollowTimelineOptions = {},
): AsyncGenerator<TimelineEntry, void, undefined> {
  const events = client.followEvents(executionId, {
    afterSeq: options.afterSeq,
    pollMs: options.pollMs ?? 100,
    signal: options.signal,
  });
  for await (const event of events) {
    const stepId = str(event.payload.step_id);
    const step =
      stepId !== undefined && SETTLED_STEP.has(event.type)
        ? await client.getStep(executionId, stepId)
        : undefined;
    const execution =
      event.type === "execution.completed" || event.type === "execution.failed"
        ? await client.get(executionId)
        : undefined;
    yield describeEvent(event, step, execution);
  }
}

/** Options of {@link formatEntry}. */
export interface FormatEntryOptions {
  /** Wrap outcomes in ANSI colours (only on a TTY, never with NO_COLOR: the caller decides). */
  readonly color?: boolean | undefined;
  /** Time origin in epoch ms: lines show `+s.mmm` from it instead of the clock time. */
  readonly since?: number | undefined;
  /** Prefix, e.g. an indent or an execution id. */
  readonly prefix?: string | undefined;
}

const GREEN = (s: string) => `\x1b[32m${s}\x1b[39m`;
const RED = (s: string) => `\x1b[31m${s}\x1b[39m`;
const YELLOW = (s: string) => `\x1b[33m${s}\x1b[39m`;
const DIM = (s: string) => `\x1b[2m${s}\x1b[22m`;

function paint(outcome: string, text: string): string {
  if (/^(succeeded|completed|allowed|granted|acked)$/.test(outcome)) return GREEN(text);
  if (/^(failed|denied|cancelled|discarded|rate limited|indeterminate)$/.test(outcome)) return RED(text);
  if (/^(awaiting approval|blocked|requested|expired|resumed)$/.test(outcome)) return YELLOW(text);
  return text;
}

/** Render an entry as one line: time, subject, outcome, duration, detail. */
export function formatEntry(entry: TimelineEntry, options: FormatEntryOptions = {}): string {
  const at = Date.parse(entry.occurredAt);
  const time =
    options.since !== undefined && Number.isFinite(at)
      ? `+${((at - options.since) / 1000).toFixed(3)}s`
      : Number.isFinite(at)
        ? new Date(at).toISOString().slice(11, 23) // UTC hh:mm:ss.mmm whatever precision the kernel sent
        : entry.occurredAt;
  const subject = entry.kind === undefined ? entry.subject : `${entry.subject} (${entry.kind})`;
  const outcome = entry.outcome.padEnd(17);
  const duration = entry.durationMs === undefined ? "" : `${entry.durationMs}ms`;
  const color = options.color === true;
  const line = [
    color ? DIM(time.padStart(8)) : time.padStart(8),
    subject.padEnd(28),
    color ? paint(entry.outcome, outcome) : outcome,
    duration.padStart(6),
    entry.detail ?? "",
  ]
    .join("  ")
    .trimEnd();
  return `${options.prefix ?? ""}${line}`;
}
