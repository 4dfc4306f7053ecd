/**
 * The SQLite store's tables, named and shaped after the Go kernel's PostgreSQL schema
 * (migrations/001_initial.sql) wherever the concept is the same, so that a query written against
 * one runs on the other; what the newer protocol added (sessions, forks, tokens, resources and
 * checkpoints, API keys) are extra columns and tables. JSON values are the exact text received
 * (TEXT, never parsed: `1.0` and big integers come back byte-exact), times Unix epoch milliseconds,
 * booleans 0/1.
 *
 * Events and steps are rowid tables keyed by an index on (execution, seq or step id), as PostgreSQL
 * keeps them: rows are appended in commit order, so a batch's requests share the table's last pages.
 * (Clustered by execution, format 5, every append landed mid-page and rebalanced three B-tree pages:
 * 27 % more WAL pages per commit.) Every index serves a query of sqlite-statements.ts, and none holds
 * a column that every request rewrites (a lease renewal's `locked_at`, a step's status). No foreign
 * keys: the kernel deletes an execution's rows itself and may append events before its row exists.
 */

/**
 * Value of `meta.format`. The name dates from the redo-log design (formats 1–3); it is kept so that
 * an older rebuno-dev opening a newer file says "written by a newer rebuno-dev" instead of "not a
 * rebuno-dev store".
 */
export const FORMAT_NAME = "rebuno-dev-redo-log";
/** `meta.version` this code writes (6: events and steps in rowid order); 4 and 5 get {@link UPGRADE}. */
export const FORMAT_VERSION = 6;

/** The terminal execution statuses as an SQL list (the partial indexes and their queries share it). */
export const TERMINAL = "('completed', 'failed', 'cancelled')";

/** Every table and index of format {@link FORMAT_VERSION}. */
export const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE agents (id TEXT PRIMARY KEY, webhook_url TEXT NOT NULL, secret TEXT NOT NULL, policy_bundle TEXT,
  registered_at INTEGER NOT NULL, lease_timeout_seconds REAL, description TEXT, input_schema TEXT, output_schema TEXT);
CREATE TABLE executions (id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, agent_version TEXT, input TEXT NOT NULL,
  status TEXT NOT NULL, output TEXT, state TEXT, failure_reason TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, deadline_at INTEGER, session TEXT, parent_execution_id TEXT, idempotency_key TEXT,
  spawned_by_execution_id TEXT, spawned_by_step_id TEXT, forked_from TEXT, fork_seq INTEGER, restoration TEXT,
  policy_bundle TEXT, rate_limit_parked INTEGER NOT NULL, tokens_used INTEGER NOT NULL, on_behalf_of TEXT);
CREATE INDEX executions_agent_id_idx ON executions (agent_id, id);
CREATE INDEX executions_status_idx ON executions (status, id);
CREATE INDEX executions_session_idx ON executions (session, created_at, id) WHERE session IS NOT NULL;
CREATE INDEX executions_spawned_by_idx ON executions (spawned_by_execution_id, created_at, id)
  WHERE spawned_by_execution_id IS NOT NULL;
CREATE INDEX executions_idempotency_idx ON executions (agent_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX executions_deadline_idx ON executions (deadline_at)
  WHERE deadline_at IS NOT NULL AND status NOT IN ${TERMINAL};
CREATE INDEX executions_terminal_idx ON executions (updated_at) WHERE status IN ${TERMINAL};
CREATE TABLE events (execution_id TEXT NOT NULL, event_seq INTEGER NOT NULL, type TEXT NOT NULL,
  payload TEXT NOT NULL, occurred_at INTEGER NOT NULL, PRIMARY KEY (execution_id, event_seq));
CREATE TABLE steps (execution_id TEXT NOT NULL, step_id TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
  args_hash TEXT NOT NULL, occurrence INTEGER NOT NULL, status TEXT NOT NULL, idempotency TEXT NOT NULL,
  args TEXT, result TEXT, error TEXT, resources TEXT NOT NULL, input_tokens INTEGER, output_tokens INTEGER,
  created_at INTEGER NOT NULL, started_at INTEGER, completed_at INTEGER, PRIMARY KEY (execution_id, step_id));
CREATE INDEX steps_failed_call_idx ON steps (execution_id, kind, target, args_hash) WHERE status = 'failed';
CREATE TABLE dispatches (id TEXT PRIMARY KEY, execution_id TEXT NOT NULL, status TEXT NOT NULL,
  attempt INTEGER NOT NULL, max_attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, locked_by TEXT,
  locked_at INTEGER, lease_ms INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE INDEX dispatches_execution_idx ON dispatches (execution_id);
CREATE INDEX dispatches_due_idx ON dispatches (next_attempt_at) WHERE status IN ('pending', 'failed');
CREATE INDEX dispatches_in_flight_idx ON dispatches (execution_id) WHERE status = 'in_flight';
CREATE TABLE dispatch_step_counters (dispatch_id TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
  args_hash TEXT NOT NULL, consumed INTEGER NOT NULL, PRIMARY KEY (dispatch_id, kind, target, args_hash))
  WITHOUT ROWID;
CREATE TABLE approvals (id TEXT PRIMARY KEY, execution_id TEXT NOT NULL, step_id TEXT NOT NULL,
  status TEXT NOT NULL, approvers TEXT, message TEXT, timeout_at INTEGER NOT NULL, decided_by TEXT,
  decided_at INTEGER, rationale TEXT, created_at INTEGER NOT NULL);
CREATE INDEX approvals_execution_idx ON approvals (execution_id);
CREATE INDEX approvals_pending_timeout_idx ON approvals (status, timeout_at) WHERE status = 'pending';
CREATE TABLE api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL, scopes TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, rotated_at INTEGER, revoked_at INTEGER);
CREATE TABLE resources (execution_id TEXT NOT NULL, key TEXT NOT NULL, driver_id TEXT NOT NULL,
  configuration TEXT NOT NULL, configuration_hash TEXT NOT NULL, coverage_reuse INTEGER NOT NULL,
  every_steps INTEGER NOT NULL, on_completion INTEGER NOT NULL, generation INTEGER NOT NULL, count INTEGER NOT NULL,
  registered_seq INTEGER NOT NULL, binding TEXT, checkpoint_ref TEXT, UNIQUE (execution_id, key));
CREATE TABLE checkpoints (execution_id TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,
  generation INTEGER NOT NULL, checkpoint_ref TEXT NOT NULL, covered_seq INTEGER NOT NULL, invalidated_seq INTEGER,
  UNIQUE (execution_id, key, seq));
`;

const table = (name: string): string => SCHEMA.match(new RegExp(`CREATE TABLE ${name} \\([^;]*;`))![0];
const index = (name: string): string => SCHEMA.match(new RegExp(`CREATE INDEX ${name} [^;]*;`))![0];

/**
 * Formats 4 and 5 → 6, inside the opening transaction: events and steps from WITHOUT ROWID
 * (clustered by execution, module comment) to rowid tables, and (format 4) without the indexes
 * that every step and lease renewal rewrote.
 */
export const UPGRADE = `DROP INDEX IF EXISTS steps_status_idx; DROP INDEX dispatches_in_flight_idx;
  ${index("dispatches_in_flight_idx")} DROP INDEX steps_failed_call_idx;
  ALTER TABLE events RENAME TO events5; ${table("events")} INSERT INTO events SELECT * FROM events5;
  ALTER TABLE steps RENAME TO steps5; ${table("steps")} INSERT INTO steps SELECT * FROM steps5;
  DROP TABLE events5; DROP TABLE steps5; ${index("steps_failed_call_idx")}
  UPDATE meta SET value = '6' WHERE key = 'version';`;

/**
 * The meta rows of a new file: `commits` counts committed batches (the seal file, sqlite-seal.ts,
 * compares it), `store_id` tells this file from another one put in its place.
 */
export function metaRows(storeId: string): string {
  return `INSERT INTO meta (key, value) VALUES ('format', '${FORMAT_NAME}'), ('version', '${FORMAT_VERSION}'),
  ('store_id', '${storeId}'), ('commits', '0');`;
}
