// Public API of @rebuno/dev-kernel. Every export is listed by name (no `export *`).

export type {
  AgentProvision,
  ApiKeyProvision,
  CorsOrigins,
  DevKernelOptions,
  DispatchOptions,
  FetchLike,
} from "./config.js";
export { AnonymousNetworkAccessError, isLoopbackAddress } from "./exposure.js";
export type { CoreHeaders, CoreRequest, CoreResponse } from "./http/types.js";
export type { IdGenerator } from "./ids.js";
export { createUuidV7Generator } from "./ids.js";
export type { DevKernel, ListenOptions } from "./kernel.js";
export { KERNEL_ROUTE_TEMPLATES, MAX_BODY_BYTES, startDevKernel } from "./kernel.js";
export type { CounterName } from "./metrics.js";
export { Metrics } from "./metrics.js";
// The policy engine is its own package, @rebuno/policy (the CLI uses it without the kernel).
export { MemoryStore } from "./store/memory.js";
// Static export is cheap: better-sqlite3 (optional) is loaded only when a database is opened.
export type { SqliteStoreOptions } from "./store/sqlite.js";
export { SqliteStore } from "./store/sqlite.js";
export { SqliteUnavailableError } from "./store/sqlite-errors.js";
export { StoreRowCorruptError } from "./store/sqlite-json.js";
export {
  STORE_EXIT_CODES,
  StoreCommitError,
  StoreCorruptError,
  StoreError,
  StoreFormatError,
  StoreLockedError,
  StoreReadOnlyError,
  StoreUnavailableError,
  storeExitCode,
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
