/**
 * The one mapping between a tool failure and what the kernel records for it. A live failure is
 * recorded as `{message}` and the ToolError the caller sees is rebuilt from that record, by the
 * same function a replay uses, so the first run and every replay throw the same error (message,
 * reason, fields, string) and nothing is prefixed twice.
 */
import { type PolicyError, ToolError, type ToolErrorReason } from "@rebuno/protocol";

/** `message || name` of an error; String() of anything else. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string" ? error : String(error);
}

/**
 * The text recorded for an error a tool body threw. A ToolError the body raised about this same
 * tool (an MCP `isError` result, a hand-thrown `new ToolError(msg, { toolId })`) is recorded
 * without its `toolId: ` prefix, because the replay adds that prefix again; a nested tool's
 * failure keeps its own prefix (`outer: inner: disk full` names the chain).
 */
export function recordedFailureText(error: unknown, toolId: string): string {
  if (ToolError.isInstance(error) && error.toolId === toolId && error.stepId === undefined) {
    return error.failure;
  }
  return errorMessage(error);
}

const SUBAGENT_REASONS: ReadonlySet<string> = new Set(["subagent_failed", "subagent_cancelled"]);

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The ToolError for a recorded step error: ours (`{message}`), the kernel's indeterminate orphan
 * (`{message, reason: "indeterminate"}`), a settled subagent (`{reason: "subagent_failed" |
 * "subagent_cancelled", execution_id, failure_reason}`), or any other JSON (message, else reason,
 * else the JSON text).
 */
export function toolErrorFromRecord(
  recorded: unknown,
  toolId: string | undefined,
  stepId: string | undefined,
  cause?: unknown,
): ToolError {
  const base = {
    ...(toolId === undefined || toolId === "" ? {} : { toolId }),
    ...(stepId === undefined || stepId === "" ? {} : { stepId }),
    ...(cause === undefined ? {} : { cause }),
  };
  if (typeof recorded !== "object" || recorded === null) {
    return new ToolError(typeof recorded === "string" ? recorded : JSON.stringify(recorded), base);
  }
  const e = recorded as Record<string, unknown>;
  const reason = text(e.reason);
  if (reason !== undefined && SUBAGENT_REASONS.has(reason)) {
    const childExecutionId = text(e.execution_id);
    const childError = text(e.failure_reason);
    const verb = reason === "subagent_failed" ? "failed" : "was cancelled";
    const child = childExecutionId === undefined ? "subagent" : `subagent ${childExecutionId}`;
    return new ToolError(`${child} ${verb}${childError === undefined ? "" : `: ${childError}`}`, {
      ...base,
      reason: reason as ToolErrorReason,
      ...(childExecutionId === undefined ? {} : { childExecutionId }),
      ...(childError === undefined ? {} : { childError }),
    });
  }
  const message = text(e.message) ?? reason ?? JSON.stringify(recorded);
  return new ToolError(message, {
    ...base,
    reason: reason === "indeterminate" ? "indeterminate" : "tool_failed",
  });
}

/** The ToolError a direct (non-framework) call of a denied tool throws. */
export function deniedToolError(toolId: string, stepId: string | undefined, denial: PolicyError): ToolError {
  const policyReason = denial.reason || denial.message;
  return new ToolError(`not allowed. reason: ${policyReason}`, {
    toolId,
    reason: "denied",
    policyReason,
    ...(stepId === undefined || stepId === "" ? {} : { stepId }),
    ...(denial.ruleId === undefined ? {} : { ruleId: denial.ruleId }),
    cause: denial,
  });
}
