// Store rows with the fields every test leaves at their defaults; `extra` overrides any of them.
import type { DispatchRow, ExecutionRow, StepRow } from "../src/store/types.js";

export const execution = (id: string, extra: Partial<ExecutionRow> = {}): ExecutionRow => ({
  id,
  agentId: "a",
  inputJson: '{"n":1.0}',
  status: "running",
  createdAt: 1,
  updatedAt: 1,
  rateLimitParked: false,
  tokensUsed: 0,
  ...extra,
});

export const step = (executionId: string, stepId: string, extra: Partial<StepRow> = {}): StepRow => ({
  executionId,
  stepId,
  kind: "tool_call",
  target: "t",
  argsHash: "h",
  occurrence: 0,
  status: "executing",
  idempotency: "safe_to_retry",
  resources: [],
  createdAt: 1,
  ...extra,
});

export const dispatch = (id: string, executionId: string, extra: Partial<DispatchRow> = {}): DispatchRow => ({
  id,
  executionId,
  status: "pending",
  attempt: 0,
  maxAttempts: 5,
  nextAttemptAt: 10,
  leaseMs: 1000,
  createdAt: 0,
  ...extra,
});
