/** The SQLite store's tables and indexes. */

/** Terminal execution statuses as an SQL list. */
export const TERMINAL = "('completed','failed','cancelled')";

// Each table keeps the whole row as JSON (`row`) plus the columns its queries filter or sort on.
// Rows are small plain values, so one JSON column is simpler than mapping every field to a column,
// and payload texts inside it (`*Json` fields) stay byte-exact because they are JSON strings.
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS executions (
  id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, status TEXT NOT NULL, session TEXT,
  idempotency_key TEXT, parent_id TEXT, parent_step_id TEXT, deadline_at INTEGER,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, row TEXT NOT NULL
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS executions_idem ON executions(agent_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_session ON executions(session, created_at, id) WHERE session IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_parent ON executions(parent_id, created_at, id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_deadline ON executions(deadline_at) WHERE deadline_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS events (
  execution_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL,
  occurred_at INTEGER NOT NULL, PRIMARY KEY (execution_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS steps (
  execution_id TEXT NOT NULL, step_id TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
  args_hash TEXT NOT NULL, status TEXT NOT NULL, row TEXT NOT NULL, PRIMARY KEY (execution_id, step_id)
) WITHOUT ROWID;
-- Partial: only failed steps are looked up by call identity (at_most_once), and an index entry per
-- step cost every submission a write to a random page (≈ 90 µs per WAL frame here).
DROP INDEX IF EXISTS steps_call;
CREATE INDEX IF NOT EXISTS steps_failed_call ON steps(execution_id, kind, target, args_hash)
  WHERE status = 'failed';
CREATE TABLE IF NOT EXISTS occurrences (
  dispatch_id TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL, args_hash TEXT NOT NULL,
  consumed INTEGER NOT NULL, PRIMARY KEY (dispatch_id, kind, target, args_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dispatches (
  id TEXT PRIMARY KEY, execution_id TEXT NOT NULL, status TEXT NOT NULL, next_attempt_at INTEGER NOT NULL,
  locked_at INTEGER, lease_ms INTEGER NOT NULL, created_at INTEGER NOT NULL, row TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dispatches_execution ON dispatches(execution_id, created_at, id);
CREATE INDEX IF NOT EXISTS dispatches_due ON dispatches(next_attempt_at) WHERE status IN ('pending','failed');
CREATE INDEX IF NOT EXISTS dispatches_leases ON dispatches(status) WHERE status = 'in_flight';
CREATE TABLE IF NOT EXISTS approvals (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, execution_id TEXT NOT NULL,
  step_id TEXT NOT NULL, status TEXT NOT NULL, timeout_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approvals_execution ON approvals(execution_id, status);
CREATE TABLE IF NOT EXISTS agents (id TEXT PRIMARY KEY, row TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS api_keys (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, token_hash TEXT NOT NULL UNIQUE, row TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS resources (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, key TEXT NOT NULL, row TEXT NOT NULL,
  UNIQUE (execution_id, key)
);
CREATE TABLE IF NOT EXISTS checkpoints (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,
  row TEXT NOT NULL, UNIQUE (execution_id, key, seq)
);
`;
