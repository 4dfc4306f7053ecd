// Public API of @rebuno/protocol. Every export is listed by name (no `export *`).

export type { CanonicalJsonOptions } from "./canonical-json.js";
export { canonicalJson, canonicalJsonText, compareUtf8, encodeGoString } from "./canonical-json.js";
export type { KernelErrorClass, KernelErrorCode } from "./error-mapping.js";
export { ERROR_CODE_CLASSES, errorFromEnvelope, failureReason } from "./error-mapping.js";
export type {
  BlockedOptions,
  KernelErrorOptions,
  KernelErrorSubclassOptions,
  PolicyErrorOptions,
  RateLimitedOptions,
  RebunoErrorOptions,
  ToolErrorOptions,
  ToolErrorReason,
  UnexpectedResponseOptions,
  ValidationErrorOptions,
  ValidationIssue,
} from "./errors.js";
export {
  APIError,
  Blocked,
  CheckpointUnavailable,
  ConfigurationError,
  ConflictError,
  ForbiddenError,
  InternalError,
  KernelError,
  LeaseSuperseded,
  NetworkError,
  NotFoundError,
  PolicyError,
  RateLimited,
  RebunoError,
  Terminated,
  TimeoutError,
  ToolError,
  TransportError,
  UnauthorizedError,
  UnexpectedResponse,
  ValidationError,
} from "./errors.js";
// Response schemas (loose)
export type { EventType } from "./event-types.js";
export { EVENT_TYPES } from "./event-types.js";
export { argsHash, argsHashFromText, computeStepId } from "./identity.js";
export type { KernelProtocol, NotSupportedByKernelOptions } from "./kernel-protocol.js";
export {
  DEFAULT_KERNEL_PROTOCOL,
  KERNEL_PROTOCOL_ENV,
  KERNEL_PROTOCOLS,
  NotSupportedByKernel,
  resolveKernelProtocol,
} from "./kernel-protocol.js";
// Models and parsers
export type {
  Agent,
  ApiKey,
  Approval,
  ApprovalEvent,
  ApprovalEventPayload,
  DispatchEvent,
  DispatchEventPayload,
  Event,
  Execution,
  ExecutionEvent,
  ExecutionEventPayload,
  ExecutionList,
  ForkCheckpoint,
  ForkPoints,
  ResourceEvent,
  ResourceEventPayload,
  ResourceView,
  RestorationEntry,
  SpawnedBy,
  Step,
  StepDecision,
  StepEvent,
  StepEventPayload,
  StepResource,
  WebhookPayload,
} from "./models.js";
export type { JsonObjectWithRaw, ParseJsonOptions } from "./parse-json.js";
export { parseJson, parseJsonObjectWithRaw } from "./parse-json.js";
export {
  parseAgent,
  parseApiKey,
  parseApproval,
  parseEvent,
  parseExecution,
  parseExecutionList,
  parseForkPoints,
  parseResourceView,
  parseStep,
  parseStepDecision,
  parseWebhookPayload,
} from "./parse-models.js";
export { RawJson } from "./raw-json.js";
export type {
  RecordedApproval,
  RecordedExecution,
  RecordedStep,
  Recording,
  RecordingErrorOptions,
  RecordingProblem,
} from "./recording.js";
export { parseRecording, RECORDING_FORMAT, RecordingError } from "./recording.js";
export type { RequestSigningInput, SigningSecret } from "./signing.js";
export {
  HEADER_AGENT_ID,
  HEADER_DISPATCH_ATTEMPT,
  HEADER_DISPATCH_ID,
  HEADER_EXECUTION_ID,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  isTimestampWithinWindow,
  requestSigningMessage,
  SIGNATURE_CLOCK_WINDOW_SECONDS,
  signRequest,
  signRequestAsync,
  verifyRequestSignature,
  verifyWebhookSignature,
  webhookSignature,
} from "./signing.js";
export { normalizeJson, stringifyJson, toWireJson } from "./strict-json.js";
export {
  type ExecutionSpanContext,
  executionSpanContext,
  rootSpanIdOfExecution,
  traceIdOfExecution,
} from "./trace-ids.js";
export { decodeUtf8Go } from "./utf8.js";
// Wire vocabulary
export type {
  ApiKeyScope,
  ApprovalStatus,
  Decision,
  ExecutionStatus,
  Idempotency,
  StepKind,
  StepStatus,
} from "./wire-common.js";
export {
  API_KEY_SCOPES,
  APPROVAL_STATUSES,
  ApiKeyScopeSchema,
  ApprovalStatusSchema,
  DECISIONS,
  DecisionSchema,
  EXECUTION_STATUSES,
  ExecutionStatusSchema,
  IDEMPOTENCY_MODES,
  IdempotencySchema,
  isTerminalExecutionStatus,
  JsonValueSchema,
  RESOURCE_KEY_PATTERN,
  STEP_KINDS,
  STEP_STATUSES,
  STREAM_DELTA_MAX_BYTES,
  StepKindSchema,
  StepStatusSchema,
  TERMINAL_EXECUTION_STATUSES,
  TERMINAL_STEP_STATUSES,
} from "./wire-common.js";
// Request schemas (strict)
export type {
  BindResourceRequest,
  Capture,
  CaptureFailure,
  CheckpointsRequest,
  CompleteExecutionRequest,
  CompleteStepRequest,
  CreateApiKeyRequest,
  CreateExecutionRequest,
  DecideApprovalRequest,
  FailExecutionRequest,
  FailStepRequest,
  ForkRequest,
  RegisterAgentRequest,
  RegisterResourceRequest,
  SetAgentMetadataRequest,
  SetPolicyRequest,
  StreamDeltaRequest,
  SubmitStepRequest,
  TestPolicyRequest,
} from "./wire-requests.js";
export {
  BindResourceRequestSchema,
  CaptureFailureSchema,
  CaptureSchema,
  CheckpointsRequestSchema,
  CompleteExecutionRequestSchema,
  CompleteStepRequestSchema,
  CreateApiKeyRequestSchema,
  CreateExecutionRequestSchema,
  DecideApprovalRequestSchema,
  FailExecutionRequestSchema,
  FailStepRequestSchema,
  ForkRequestSchema,
  RegisterAgentRequestSchema,
  RegisterResourceRequestSchema,
  ResourceKeySchema,
  SetAgentMetadataRequestSchema,
  SetPolicyRequestSchema,
  SpawnedBySchema,
  StreamDeltaRequestSchema,
  SubmitStepRequestSchema,
  TestPolicyRequestSchema,
  validateRequest,
} from "./wire-requests.js";
export {
  AgentWire,
  ApiKeyWire,
  ApprovalEventPayloadWire,
  ApprovalWire,
  DispatchEventPayloadWire,
  ErrorEnvelopeWire,
  EventWire,
  ExecutionEventPayloadWire,
  ExecutionListWire,
  ExecutionWire,
  ForkCheckpointWire,
  ForkPointsWire,
  HealthWire,
  PreviousWire,
  ResourceEventPayloadWire,
  ResourceViewWire,
  RestorationEntryWire,
  SpawnedByWire,
  StepDecisionWire,
  StepEventPayloadWire,
  StepOutcomeWire,
  StepResourceWire,
  StepWire,
  StreamFrameWire,
  SuspendWire,
  WebhookPayloadWire,
} from "./wire-responses.js";
