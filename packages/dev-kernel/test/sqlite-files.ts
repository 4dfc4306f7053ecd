// Helpers for the SQLite store tests: what a kernel restarted right now would find in the file, and
// the whole observable state of a store through its read API.
//
// The store holds an exclusive lock on its file for as long as it is open, so no second connection
// can read it. A copy of the database and its WAL, taken between two synchronous store calls, is
// what a SIGKILL at that moment would leave on disk (killing a process does not lose what it wrote
// to the OS): opening the copy runs SQLite's WAL recovery, which keeps committed transactions only.
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { TempDirs } from "@rebuno/test-kit";
import Database from "better-sqlite3";
import { afterAll } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import type { Store } from "../src/store/types.js";

const dirs = new TempDirs("rebuno-sqlite");
afterAll(() => dirs.removeAll());

/** A fresh temporary directory, removed after the importing file's tests. */
export function tempDir(): string {
  return dirs.make();
}

/**
 * Copy `path` (with its WAL and seal) to a new file: the file a crash at this moment would leave.
 */
export function crashCopy(path: string): string {
  const copy = join(tempDir(), "copy.db");
  copyFileSync(path, copy);
  for (const side of ["-wal", "-seal"]) {
    if (existsSync(path + side)) copyFileSync(path + side, copy + side);
  }
  return copy;
}

/** What a crash copy of the file holds: its commit count and agent ids (ascending). */
export interface FileContents {
  /** Batches committed (meta.commits: one per group commit, one per open). */
  readonly commits: number;
  readonly agents: readonly string[];
}

/** What the file holds right now (through a crash copy, see the module comment). */
export function fileContents(path: string): FileContents {
  const db = new Database(crashCopy(path));
  try {
    return {
      commits: Number(db.prepare("SELECT value FROM meta WHERE key = 'commits'").pluck().get()),
      agents: db.prepare("SELECT id FROM agents ORDER BY id").pluck().all() as string[],
    };
  } finally {
    db.close();
  }
}

/** Open a crash copy of `path` (what a restart would find) and return its observable state. */
export function restartState(path: string, known: KnownKeys = {}): ObservableState {
  const store = new SqliteStore(crashCopy(path));
  try {
    return observe(store, known);
  } finally {
    store.close();
  }
}

/** Everything the store's read API shows, keyed for `toEqual`. */
export type ObservableState = Record<string, unknown>;

const ALL = 1_000_000;
const FAR_FUTURE = Number.MAX_SAFE_INTEGER;

/** Keys that no listing reaches, for {@link observe} to read one by one. */
export interface KnownKeys {
  /** Execution ids to read even when no listing shows them (deleted ones, events-only ids). */
  readonly executionIds?: readonly string[];
  /** Dispatch ids to read with `getDispatch` (exhausted dispatches are in no listing). */
  readonly dispatchIds?: readonly string[];
  readonly occurrences?: readonly (readonly [string, "tool_call" | "llm_call" | "local", string, string])[];
  readonly approvalIds?: readonly string[];
}

/**
 * The store's whole state as its read methods return it: every listing (in its documented order),
 * the per-execution tables, and the rows named in `known` one by one.
 */
export function observe(store: Store, known: KnownKeys = {}): ObservableState {
  const executions = store.listExecutions({ limit: ALL });
  const executionIds = [...new Set([...executions.map((e) => e.id), ...(known.executionIds ?? [])])];
  const perExecution = Object.fromEntries(
    executionIds.map((id) => [
      id,
      {
        execution: store.getExecution(id),
        events: store.listEvents(id, 0, ALL),
        lastEventSeq: store.lastEventSeq(id),
        steps: store.listSteps(id),
        activeDispatches: store.listActiveDispatches(id),
        pendingApprovals: store.listPendingApprovals(id),
        resources: store.listResources(id),
        checkpoints: store.listCheckpoints(id, undefined),
        children: store.listChildExecutions(id).map((e) => e.id),
      },
    ]),
  );
  const sessions = [...new Set(executions.flatMap((e) => (e.session === undefined ? [] : [e.session])))];
  const apiKeys = store.listApiKeys();
  return {
    executions,
    perExecution,
    sessions: Object.fromEntries(sessions.map((s) => [s, store.listSessionExecutions(s).map((e) => e.id)])),
    pastDeadline: store.listExecutionsPastDeadline(FAR_FUTURE).map((e) => e.id),
    unsettled: store.listUnsettledSubagents().map((e) => e.id),
    terminalBefore: store.listTerminalExecutionsBefore(FAR_FUTURE, ALL).map((e) => e.id),
    dueDispatches: store.listDueDispatches(FAR_FUTURE, ALL),
    nextDispatchDueAt: store.nextDispatchDueAt(),
    expiredLeases: store.listExpiredLeases(FAR_FUTURE),
    approvals: store.listApprovals(undefined),
    expiredApprovals: store.listExpiredApprovals(FAR_FUTURE),
    agents: store.listAgents(),
    apiKeys,
    apiKeysByHash: apiKeys.map((k) => store.findApiKeyByTokenHash(k.tokenHash)?.id),
    dispatches: (known.dispatchIds ?? []).map((id) => store.getDispatch(id)),
    approvalsById: (known.approvalIds ?? []).map((id) => store.getApproval(id)),
    occurrences: (known.occurrences ?? []).map(([d, kind, target, hash]) =>
      store.getOccurrence(d, kind, target, hash),
    ),
  };
}
