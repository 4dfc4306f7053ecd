/**
 * From an execution's events and steps to the picture the waterfall draws: the dispatch attempts
 * (when each began, why each ended) and one row per step (when it was proposed, when its body ran
 * and in which attempt, how it ended). Pure: no DOM, no clock; unit-tested in node on event logs
 * recorded from a real dev kernel (packages/console/test/waterfall-derive.test.ts).
 *
 * The log does not record everything (docs/protocol.md §6.2): a replayed step and a safe_to_retry
 * body run again after a crash write no event. Both are inferred here from the attempt in which a
 * step's events fall, and named as inferences in what the view shows.
 */
import type { Event as KernelEvent, Step } from "@rebuno/protocol";

/** Why a dispatch attempt stopped (docs/protocol.md §7, §8.4, §11). */
export type AttemptEnd =
  | { readonly kind: "running" }
  | { readonly kind: "completed" }
  | { readonly kind: "failed"; readonly reason: string }
  | { readonly kind: "cancelled"; readonly reason: string }
  /** No outcome before the kernel redelivered: the agent went silent and its lease expired (docs/protocol.md §7.3). */
  | { readonly kind: "lease_expired" }
  /** The handler suspended: waiting for an approval or for subagents (docs/protocol.md §8.4, docs/protocol.md §11). */
  | { readonly kind: "suspended"; readonly waitingFor: "approval" | "subagent" | "other" };

/** One delivery of the execution to the agent that the agent accepted. */
export interface Attempt {
  /** 1, 2, … in the order the agent received them, across dispatches (each resume is a new dispatch). */
  readonly ordinal: number;
  readonly dispatchId: string;
  /** The dispatch's attempt number (1, 2, …; docs/protocol.md §10.5). */
  readonly attempt: number;
  readonly startMs: number;
  readonly endMs: number | undefined;
  readonly end: AttemptEnd;
}

/** A webhook delivery the agent did not accept (`dispatch.failed`). */
export interface DeliveryFailure {
  readonly atMs: number;
  readonly attempt: number;
  readonly maxAttempts: number | undefined;
  /** `http_status`, `connection_refused`, `timeout`, … or `HTTP 401` when the agent answered. */
  readonly cause: string;
  readonly error: string;
  readonly nextAttemptAt: string | undefined;
}

/** How a step row is coloured. */
export type Outcome =
  | "succeeded"
  | "failed"
  | "denied"
  | "indeterminate"
  | "awaiting_approval"
  | "executing"
  | "cancelled"
  | "pending";

/** One run of a step's body, as far as the log tells. */
export interface BodyRun {
  /** {@link Attempt.ordinal} of the delivery the body ran in (0 when none was open). */
  readonly ordinal: number;
  readonly startMs: number;
  /** Undefined while running. */
  readonly endMs: number | undefined;
  /** Stopped by the attempt ending (crash, lost lease) before an outcome was recorded. */
  readonly cutShort: boolean;
  /** No `step.executing` marks this run: inferred from an outcome recorded in a later attempt. */
  readonly inferred: boolean;
}

/** A human decision on a step (docs/protocol.md §10.4). */
export interface ApprovalWait {
  readonly requestedMs: number;
  readonly decidedMs: number | undefined;
  readonly status: "pending" | "granted" | "denied" | "expired";
  readonly decidedBy: string | undefined;
  readonly rationale: string | undefined;
}

export interface StepRow {
  readonly stepId: string;
  readonly target: string;
  readonly kind: string;
  readonly idempotency: string;
  readonly occurrence: number;
  readonly status: string;
  readonly outcome: Outcome;
  readonly proposedMs: number;
  readonly settledMs: number | undefined;
  readonly bodies: readonly BodyRun[];
  readonly approval: ApprovalWait | undefined;
  /** Set for denied steps: the rule (when one decided) and the reason. */
  readonly denial: { readonly ruleId: string | undefined; readonly reason: string } | undefined;
  /** Ordinals of later deliveries that found this step recorded: they replayed it, no body ran (inferred). */
  readonly replayedIn: readonly number[];
  readonly args: unknown;
  readonly result: unknown;
  readonly error: unknown;
}

export interface Waterfall {
  readonly startMs: number;
  /** The last event's time, or `nowMs` while something is still running. */
  readonly endMs: number;
  readonly attempts: readonly Attempt[];
  readonly deliveryFailures: readonly DeliveryFailure[];
  readonly steps: readonly StepRow[];
}

type Payload = Readonly<Record<string, unknown>>;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const at = (e: KernelEvent): number => Date.parse(e.occurredAt);

/** The human reason inside a step error (`{reason}`, `{message}`) or undefined. */
export function errorReason(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return typeof error === "string" ? error : undefined;
  const e = error as Payload;
  return str(e.reason) ?? str(e.message) ?? str(e.error);
}

/** The kernel's "outcome unknown" failure of an at_most_once step (docs/protocol.md §1.2). */
export function isIndeterminate(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as Payload).reason === "indeterminate";
}

interface MutableAttempt {
  ordinal: number;
  dispatchId: string;
  attempt: number;
  startMs: number;
  endMs: number | undefined;
  end: AttemptEnd;
}

interface StepTrace {
  proposedMs: number | undefined;
  executing: { ordinal: number; atMs: number } | undefined;
  settled: { ordinal: number; atMs: number; type: string; payload: Payload } | undefined;
  approval: ApprovalWait | undefined;
  denial: { ruleId: string | undefined; reason: string } | undefined;
}

function closeAttempt(open: MutableAttempt | undefined, atMs: number, end: AttemptEnd): undefined {
  if (open !== undefined && open.end.kind === "running") {
    open.endMs = atMs;
    open.end = end;
  }
  return undefined;
}

/** Walk the log once: attempts, delivery failures and what each step went through. */
function trace(events: readonly KernelEvent[]): {
  attempts: MutableAttempt[];
  failures: DeliveryFailure[];
  steps: Map<string, StepTrace>;
} {
  const attempts: MutableAttempt[] = [];
  const failures: DeliveryFailure[] = [];
  const steps = new Map<string, StepTrace>();
  let open: MutableAttempt | undefined;
  let previousType = "";
  const stepOf = (id: string): StepTrace => {
    let s = steps.get(id);
    if (s === undefined) {
      s = {
        proposedMs: undefined,
        executing: undefined,
        settled: undefined,
        approval: undefined,
        denial: undefined,
      };
      steps.set(id, s);
    }
    return s;
  };
  for (const e of [...events].sort((a, b) => a.eventSeq - b.eventSeq)) {
    const p = e.payload as Payload;
    const t = at(e);
    switch (e.type) {
      case "dispatch.acked": {
        // A redelivery of the attempt still open: that attempt never reported back (docs/protocol.md §7.3).
        open = closeAttempt(open, t, { kind: "lease_expired" });
        open = {
          ordinal: attempts.length + 1,
          dispatchId: str(p.dispatch_id) ?? "",
          attempt: num(p.attempt) ?? 0,
          startMs: t,
          endMs: undefined,
          end: { kind: "running" },
        };
        attempts.push(open);
        break;
      }
      case "dispatch.failed": {
        const status = num(p.http_status);
        failures.push({
          atMs: t,
          attempt: num(p.attempt) ?? 0,
          maxAttempts: num(p.max_attempts),
          cause: status !== undefined ? `HTTP ${status}` : (str(p.error_class) ?? "delivery failed"),
          error: str(p.error) ?? "",
          nextAttemptAt: str(p.next_attempt_at),
        });
        break;
      }
      case "execution.blocked": {
        // The kernel writes approval.requested right before the block it causes (docs/protocol.md §10.6).
        const waitingFor =
          str(p.reason) === "awaiting_steps"
            ? "subagent"
            : previousType === "approval.requested"
              ? "approval"
              : "other";
        open = closeAttempt(open, t, { kind: "suspended", waitingFor });
        break;
      }
      case "execution.completed":
        open = closeAttempt(open, t, { kind: "completed" });
        break;
      case "execution.failed":
        open = closeAttempt(open, t, { kind: "failed", reason: str(p.reason) ?? "" });
        break;
      case "execution.cancelled":
        open = closeAttempt(open, t, { kind: "cancelled", reason: str(p.reason) ?? "" });
        break;
      case "step.proposed":
        stepOf(str(p.step_id) ?? "").proposedMs = t;
        break;
      case "step.executing":
        stepOf(str(p.step_id) ?? "").executing = { ordinal: open?.ordinal ?? 0, atMs: t };
        break;
      case "step.succeeded":
      case "step.failed":
      case "step.cancelled":
        stepOf(str(p.step_id) ?? "").settled = {
          ordinal: open?.ordinal ?? 0,
          atMs: t,
          type: e.type,
          payload: p,
        };
        break;
      case "step.denied": {
        const s = stepOf(str(p.step_id) ?? "");
        s.settled = { ordinal: open?.ordinal ?? 0, atMs: t, type: e.type, payload: p };
        s.denial = {
          ruleId: str(p.rule_id) ?? str((p.error as Payload | undefined)?.rule_id),
          reason: errorReason(p.error) ?? "policy_denied",
        };
        break;
      }
      case "approval.requested":
        stepOf(str(p.step_id) ?? "").approval = {
          requestedMs: t,
          decidedMs: undefined,
          status: "pending",
          decidedBy: undefined,
          rationale: undefined,
        };
        break;
      case "approval.granted":
      case "approval.denied":
      case "approval.expired": {
        const s = stepOf(str(p.step_id) ?? "");
        s.approval = {
          requestedMs: s.approval?.requestedMs ?? t,
          decidedMs: t,
          status: e.type.slice("approval.".length) as ApprovalWait["status"],
          decidedBy: str(p.decided_by),
          rationale: str(p.rationale),
        };
        break;
      }
      default:
        break; // queued, discarded, resource.*, types a newer kernel adds: nothing to draw
    }
    previousType = e.type;
  }
  return { attempts, failures, steps };
}

function outcomeOf(step: Step): Outcome {
  switch (step.status) {
    case "succeeded":
    case "denied":
    case "executing":
    case "cancelled":
    case "awaiting_approval":
      return step.status;
    case "failed":
      return isIndeterminate(step.error) ? "indeterminate" : "failed";
    default:
      return "pending";
  }
}

/** The body runs of one step: the recorded one, plus the one a redelivery ran without an event. */
function bodiesOf(step: Step, s: StepTrace, attempts: readonly MutableAttempt[]): BodyRun[] {
  if (s.executing === undefined) return [];
  const first = s.executing;
  const firstAttempt = attempts.find((a) => a.ordinal === first.ordinal);
  const settled = s.settled;
  if (settled === undefined || settled.ordinal === first.ordinal) {
    // Still running, or ended in the attempt that started it; or left behind by a dead attempt.
    const cutShort =
      settled === undefined && firstAttempt !== undefined && firstAttempt.end.kind !== "running";
    const stop = settled?.atMs ?? (cutShort ? firstAttempt?.endMs : undefined);
    return [{ ordinal: first.ordinal, startMs: first.atMs, endMs: stop, cutShort, inferred: false }];
  }
  // Outcome recorded in a later attempt: the first run was cut short by its attempt ending.
  const runs: BodyRun[] = [
    {
      ordinal: first.ordinal,
      startMs: first.atMs,
      endMs: firstAttempt?.endMs ?? settled.atMs,
      cutShort: true,
      inferred: false,
    },
  ];
  // safe_to_retry: the redelivery was told to proceed and ran the body again (no event, docs/protocol.md §6.2);
  // at_most_once: it was answered the indeterminate failure instead, so no second run.
  if (!isIndeterminate(step.error) && settled.type !== "step.cancelled") {
    const again = attempts.find((a) => a.ordinal === settled.ordinal);
    runs.push({
      ordinal: settled.ordinal,
      startMs: again?.startMs ?? settled.atMs,
      endMs: settled.atMs,
      cutShort: false,
      inferred: true,
    });
  }
  return runs;
}

/**
 * The waterfall of one execution. `nowMs` ends the bars of bodies still running, so the caller
 * redraws them growing; `steps` come from the steps route, `events` from the event log.
 */
export function deriveWaterfall(
  events: readonly KernelEvent[],
  steps: readonly Step[],
  nowMs: number,
): Waterfall {
  const { attempts, failures, steps: traces } = trace(events);
  const times = events.map(at).filter(Number.isFinite);
  const startMs = times.length === 0 ? nowMs : Math.min(...times);
  // Still moving: an attempt or a body running, or a person yet to decide; the axis runs to now.
  const running =
    attempts.some((a) => a.end.kind === "running") ||
    steps.some((s) => s.status === "executing" || s.status === "awaiting_approval");
  const endMs = running ? Math.max(nowMs, ...times) : times.length === 0 ? nowMs : Math.max(...times);
  const rows = steps.map((step): StepRow => {
    const s = traces.get(step.stepId) ?? {
      proposedMs: undefined,
      executing: undefined,
      settled: undefined,
      approval: undefined,
      denial: undefined,
    };
    const proposedMs = s.proposedMs ?? (step.startedAt === undefined ? startMs : Date.parse(step.startedAt));
    const settledMs = s.settled?.atMs;
    const denial =
      step.status === "denied"
        ? (s.denial ?? { ruleId: undefined, reason: errorReason(step.error) ?? "policy_denied" })
        : undefined;
    // Attempts that began after the step was settled and went on to record something new replayed it.
    const replayedIn =
      settledMs === undefined ? [] : attempts.filter((a) => a.startMs > settledMs).map((a) => a.ordinal);
    return {
      stepId: step.stepId,
      target: step.target,
      kind: step.kind,
      idempotency: step.idempotency,
      occurrence: step.occurrence,
      status: step.status,
      outcome: outcomeOf(step),
      proposedMs,
      settledMs,
      bodies: bodiesOf(step, s, attempts),
      approval: s.approval,
      denial,
      replayedIn,
      args: step.args,
      result: step.result,
      error: step.error,
    };
  });
  rows.sort((a, b) => a.proposedMs - b.proposedMs || a.stepId.localeCompare(b.stepId));
  return { startMs, endMs, attempts, deliveryFailures: failures, steps: rows };
}
