/**
 * A `KernelPort` that answers step submissions from a recording, by step identity
 * (docs/protocol.md §5.1 and §5.3 of that file): a submission whose computed step id is recorded
 * gets the recorded outcome (result, error, denial, pending approval); the first one that is not
 * recorded is the divergence. No kernel and no network.
 */
import {
  argsHashFromText,
  computeStepId,
  type RecordedStep,
  type Recording,
  type StepDecision,
} from "@rebuno/protocol";
import type {
  CaptureSet,
  KernelPort,
  LeaseRef,
  RegisterResourceBody,
  ResourceViewLike,
  StepDecisionLike,
  StepLike,
  SubmitStepBody,
} from "@rebuno/sdk";
import { ScriptedKernelPort } from "./scripted-port.js";

/** One submission the replayed code made. */
export interface ReplayedSubmission {
  readonly stepId: string;
  readonly kind: string;
  readonly target: string;
  readonly args: unknown;
  /** Whether the recording held it. */
  readonly recorded: boolean;
}

/** The first submission the recording does not hold, and the recorded step due in its place. */
export interface ReplayedUnknown {
  /** Its position among all submissions (0-based). */
  readonly index: number;
  readonly submission: ReplayedSubmission;
  /** The first recorded step, in recording order, that no submission had reached by then. */
  readonly expected: RecordedStep | undefined;
}

type Decision = StepDecisionLike & Pick<StepDecision, "decision">;

function recordedAnswer(step: RecordedStep): StepDecisionLike {
  const stepId = step.stepId;
  switch (step.status) {
    case "succeeded":
      return { decision: "replay", stepId, result: step.result ?? null };
    case "failed":
      return { decision: "replay", stepId, error: step.error ?? { message: "failed" } };
    case "denied": {
      const error = (step.error ?? {}) as { reason?: unknown; rule_id?: unknown };
      const reason = step.reason ?? (typeof error.reason === "string" ? error.reason : "policy_denied");
      const ruleId = step.ruleId ?? (typeof error.rule_id === "string" ? error.rule_id : undefined);
      return { decision: "denied", stepId, reason, ruleId };
    }
    case "cancelled":
      return { decision: "execution_terminal", stepId };
    default:
      // Still awaiting approval (or running) when it was exported: the handler parks here.
      return {
        decision: "blocked",
        stepId,
        approvalId: step.approval?.approvalId,
        reason: step.status === "awaiting_approval" ? "awaiting_approval" : `recorded_${step.status}`,
      } satisfies Decision;
  }
}

/** The recording-backed port. Use it through `replayRecording`. */
export class RecordingKernelPort implements KernelPort {
  readonly submissions: ReplayedSubmission[] = [];
  /** Ids of recorded steps a submission reached. */
  readonly reached = new Set<string>();
  /** The first submission the recording does not hold, with its position among submissions. */
  firstUnknown: ReplayedUnknown | undefined;

  readonly #recording: Recording;
  readonly #byId: Map<string, RecordedStep>;
  readonly #occurrences = new Map<string, number>();
  /** Answers new steps when the caller allowed them; otherwise a new step stops the run. */
  readonly #newSteps: ScriptedKernelPort | undefined;

  constructor(recording: Recording, newSteps: ScriptedKernelPort | undefined) {
    this.#recording = recording;
    this.#byId = new Map(recording.steps.map((s) => [s.stepId, s]));
    this.#newSteps = newSteps;
  }

  async submitStep(executionId: string, lease: LeaseRef, body: SubmitStepBody): Promise<StepDecisionLike> {
    const hash = argsHashFromText(body.args.text);
    const key = `${body.kind}\u0000${body.target}\u0000${hash}`;
    const occurrence = this.#occurrences.get(key) ?? 0;
    const stepId = computeStepId(executionId, body.kind, body.target, hash, occurrence);
    const step = this.#byId.get(stepId);
    const submission: ReplayedSubmission = {
      stepId,
      kind: body.kind,
      target: body.target,
      args: JSON.parse(body.args.text),
      recorded: step !== undefined,
    };
    this.submissions.push(submission);
    if (step !== undefined) {
      this.reached.add(stepId);
      const answer = recordedAnswer(step);
      // The kernel counts every recorded submission, terminal or not (docs/protocol.md §5.3).
      if (answer.decision !== "execution_terminal") this.#occurrences.set(key, occurrence + 1);
      return answer;
    }
    this.firstUnknown ??= {
      index: this.submissions.length - 1,
      submission,
      expected: this.#recording.steps.find((s) => !this.reached.has(s.stepId)),
    };
    if (this.#newSteps !== undefined) return this.#newSteps.submitStep(executionId, lease, body);
    // Stop the handler at the divergence, as a kernel ends a run that cannot go on.
    return { decision: "execution_terminal" };
  }

  completeStep(id: string, lease: LeaseRef, stepId: string, body: { readonly result: unknown } & CaptureSet) {
    return this.#scripted().completeStep(id, lease, stepId, body);
  }

  failStep(
    id: string,
    lease: LeaseRef,
    stepId: string,
    body: { readonly error: { readonly message: string } } & CaptureSet,
  ) {
    return this.#scripted().failStep(id, lease, stepId, body);
  }

  async getStep(id: string, stepId: string): Promise<StepLike | null> {
    const step = this.#byId.get(stepId);
    if (step === undefined) return this.#newSteps === undefined ? null : this.#newSteps.getStep(id, stepId);
    return { stepId, target: step.target, status: step.status, result: step.result, error: step.error };
  }

  async suspend(): Promise<boolean> {
    return this.#newSteps === undefined ? false : this.#newSteps.suspend();
  }

  async publishStreamDelta(): Promise<unknown> {
    return undefined;
  }

  async getPrevious(): Promise<unknown> {
    return this.#recording.execution.previous ?? null;
  }

  registerResource(id: string, lease: LeaseRef, body: RegisterResourceBody): Promise<ResourceViewLike> {
    return this.#scripted().registerResource(id, lease, body);
  }

  bindResource(id: string, lease: LeaseRef, key: string, binding: unknown): Promise<unknown> {
    return this.#scripted().bindResource(id, lease, key, binding);
  }

  publishCheckpoints(id: string, lease: LeaseRef, body: CaptureSet): Promise<unknown> {
    return this.#scripted().publishCheckpoints(id, lease, body);
  }

  // Outcomes and resources are written only by step bodies that run, i.e. new steps; without the
  // newSteps option no body runs, and resource calls are answered in memory like a fresh kernel.
  #fallback: ScriptedKernelPort | undefined;
  #scripted(): ScriptedKernelPort {
    if (this.#newSteps !== undefined) return this.#newSteps;
    this.#fallback ??= new ScriptedKernelPort();
    return this.#fallback;
  }
}
