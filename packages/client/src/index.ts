// Public API of @rebuno/client. Every export is listed by name (no `export *`).

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
export type { SseMessage, StreamDelta, StreamGap } from "./sse.js";
export { SseDecoder } from "./sse.js";
