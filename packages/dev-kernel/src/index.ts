// Public API of @rebuno/dev-kernel. Every export is listed by name (no `export *`).

export type {
  AgentProvision,
  ApiKeyProvision,
  DevKernelOptions,
  DispatchOptions,
  FetchLike,
} from "./config.js";
export type { CoreHeaders, CoreRequest, CoreResponse } from "./http/types.js";
export type { IdGenerator } from "./ids.js";
export { createUuidV7Generator } from "./ids.js";
export type { DevKernel, ListenOptions } from "./kernel.js";
export { MAX_BODY_BYTES, startDevKernel } from "./kernel.js";
export type { CounterName } from "./metrics.js";
export { Metrics } from "./metrics.js";
export { MemoryStore } from "./store/memory.js";
// Static export is cheap: better-sqlite3 loads its native addon only when a database is opened.
export type { SqliteStoreOptions } from "./store/sqlite.js";
export { SqliteStore } from "./store/sqlite.js";
export {
  StoreCommitError,
  StoreError,
  StoreFormatError,
  StoreLockedError,
  StoreUnavailableError,
} from "./store/store-errors.js";
export type {
  AgentRow,
  ApiKeyRow,
  ApprovalRow,
  ApprovalStatus,
  CheckpointRow,
  DispatchRow,
  DispatchStatus,
  EventRow,
  ExecutionListQuery,
  ExecutionRow,
  ExecutionStatus,
  Idempotency,
  ResourceRow,
  SpawnedBy,
  StepKind,
  StepRow,
  StepStatus,
  Store,
} from "./store/types.js";
export { isTerminalExecution, isTerminalStep } from "./store/types.js";
