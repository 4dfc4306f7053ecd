/** @rebuno/testing: test Rebuno agents and tools, with the dev kernel in process or kernel-free. */
export {
  type CreatedChild,
  type RecordedOutcome,
  ScriptedKernelPort,
  type ScriptedDecision,
  type SubmittedStep,
} from "./scripted-port.js";
export { ToolTestContext, type ToolTestContextOptions, withToolContext } from "./tool-test-context.js";
