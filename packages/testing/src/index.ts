/** @rebuno/testing: test Rebuno agents and tools, with the dev kernel in process or kernel-free. */
export type { JsonDifference } from "./json-diff.js";
export {
  RecordingKernelPort,
  type ReplayedSubmission,
  type ReplayedUnknown,
} from "./recording-port.js";
export {
  assertFollowsRecording,
  formatReplayReport,
  type ReplayDivergence,
  ReplayDivergenceError,
  type ReplayOptions,
  type ReplayOutcome,
  type ReplayResult,
  type ReplayTarget,
  replayRecording,
} from "./replay.js";
export {
  type CreatedChild,
  type RecordedOutcome,
  type ScriptedDecision,
  ScriptedKernelPort,
  type SubmittedStep,
} from "./scripted-port.js";
export {
  type AgentClass,
  type AgentFactory,
  type EnvironmentAgent,
  inRecordingOrder,
  type RunResult,
  TestEnvironment,
  type TestEnvironmentOptions,
} from "./test-environment.js";
export { ToolTestContext, type ToolTestContextOptions, withToolContext } from "./tool-test-context.js";
