// Public API of @rebuno/client. Every export is listed by name (no `export *`).

// The models and errors this client returns and throws, so that one import is enough.
export type {
  Agent,
  ApiKey,
  ApiKeyScope,
  Approval,
  ApprovalEvent,
  ApprovalEventPayload,
  ApprovalStatus,
  Decision,
  DispatchEvent,
  DispatchEventPayload,
  Event,
  EventType,
  Execution,
  ExecutionEvent,
  ExecutionEventPayload,
  ExecutionList,
  ExecutionStatus,
  ForkCheckpoint,
  ForkPoints,
  Idempotency,
  KernelErrorCode,
  RecordedApproval,
  RecordedExecution,
  RecordedStep,
  Recording,
  RecordingProblem,
  ResourceEvent,
  ResourceEventPayload,
  ResourceView,
  RestorationEntry,
  SpawnedBy,
  Step,
  StepDecision,
  StepEvent,
  StepEventPayload,
  StepKind,
  StepResource,
  StepStatus,
  ValidationIssue,
} from "@rebuno/protocol";
export {
  APIError,
  Blocked,
  CheckpointUnavailable,
  ConfigurationError,
  ConflictError,
  EVENT_TYPES,
  ForbiddenError,
  failureReason,
  InternalError,
  isTerminalExecutionStatus,
  KernelError,
  LeaseSuperseded,
  NetworkError,
  NotFoundError,
  NotSupportedByKernel,
  PolicyError,
  parseRecording,
  RateLimited,
  RECORDING_FORMAT,
  RebunoError,
  RecordingError,
  Terminated,
  TimeoutError,
  ToolError,
  TransportError,
  UnauthorizedError,
  UnexpectedResponse,
  ValidationError,
} from "@rebuno/protocol";
export type {
  ApprovalDecisionOptions,
  CreateApiKeyOptions,
  CreateExecutionOptions,
  ForkOptions,
  PolicyTestExecutions,
  PolicyTestRequest,
  RegisterAgentOptions,
} from "./bodies.js";
export type {
  CallOptions,
  EventsOptions,
  ListApprovalsOptions,
  ListExecutionsOptions,
  ListStepsOptions,
  PolicyTestResult,
} from "./client.js";
export { CLIENT_VERSION, Client } from "./client.js";
export type { FollowEventsOptions, StreamOptions, WaitForTerminalOptions } from "./iterators.js";
export { DEFAULT_EVENTS_LIMIT, DEFAULT_POLL_MS, DEFAULT_WAIT_TIMEOUT_MS } from "./iterators.js";
export type { ClientOptions } from "./options.js";
export { ENV_API_KEY, ENV_URL } from "./options.js";
export type { ExportRecordingOptions, RecordingSource } from "./recording.js";
export type { SseMessage, StreamDelta, StreamGap } from "./sse.js";
export { SseDecoder } from "./sse.js";
