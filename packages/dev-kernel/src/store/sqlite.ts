import type Database from "better-sqlite3";
import { BoundedCache, rowCache } from "./bounded-cache.js";
import { SqliteConnection } from "./sqlite-connection.js";
import { replayFormat3 } from "./sqlite-format3.js";
import { checkJsonColumns } from "./sqlite-json.js";
import type { SqliteStoreOptions } from "./sqlite-options.js";
import * as R from "./sqlite-rows.js";
import { DELETE_EXECUTION, executionListSql, SQL, stepsWithStatusSql } from "./sqlite-statements.js";
import type {
  ApprovalRow,
  ApprovalStatus,
  CheckpointRow,
  DispatchRow,
  ExecutionListQuery,
  ExecutionRow,
  ResourceRow,
  StepKind,
  StepRow,
  StepStatus,
  Store,
} from "./types.js";

export type { SqliteStoreOptions };

/**
 * {@link Store} on one SQLite file, in ordinary tables (sqlite-schema.ts) that any SQL tool reads.
 * Every write is a statement on them; every read an indexed query or a hit in a bounded cache of
 * the rows requests read again, which hold what SQLite holds and are all dropped when it rolls back.
 * Transactions and group commit are the connection's (sqlite-connection.ts): nothing may be
 * acknowledged before `whenDurable()` resolved. The file is locked while the store is open.
 */
export class SqliteStore implements Store {
  private readonly file: SqliteConnection;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly executions = rowCache(R.EXECUTIONS);
  private readonly lastSeqs = new BoundedCache<number>();
  private readonly steps = rowCache(R.STEPS);
  private readonly dispatches = rowCache(R.DISPATCHES);
  private readonly agents = rowCache(R.AGENTS);
  private readonly noResources = new BoundedCache<true>();
  /** Every counter of a dispatch whose counters this process cleared (every live one), up to 1 024. */
  private readonly counters = new BoundedCache<Map<string, number>>();
  private readonly eventsChecked = new BoundedCache<number>();

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    this.file = new SqliteConnection(path, options, () => {
      for (const cache of Object.values(this)) if (cache instanceof BoundedCache) cache.clear();
    });
    try {
      if (this.file.converting !== undefined) replayFormat3(this, this.file);
    } catch (err) {
      throw this.file.abandon(err); // nothing of a conversion is committed
    }
    this.file.finishOpen();
  }

  transaction<T>(fn: () => T): T {
    return this.file.transaction(fn);
  }

  whenDurable(): Promise<void> {
    return this.file.whenDurable();
  }

  close(): void {
    this.file.close();
  }

  /** The statement of `sql`, prepared on first use (a few dozen shapes; each always plucked or never). */
  private stmt(sql: string, pluck = false): Database.Statement {
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      stmt = this.file.db.prepare(sql);
      this.statements.set(sql, pluck ? stmt.pluck() : stmt);
    }
    return stmt;
  }

  /** Rows read from the file, each with its JSON columns checked first (sqlite-json.ts). */
  private all<T extends object>(table: R.Table<T>, sql: string, ...args: unknown[]): T[] {
    return (this.stmt(sql).all(...args) as R.Columns[]).map((c) => {
      checkJsonColumns(this.path, table, c, this.eventsChecked);
      return table.read(c);
    });
  }

  private run(sql: string, ...args: unknown[]): void {
    this.file.write(() => this.stmt(sql).run(...args));
  }

  /**
   * A write method of `table`: an insert, or (`what` names the row it replaces, which must exist)
   * an update that sets only the columns that changed from the cached row, if any. The row is then
   * cached as given (rows are immutable values).
   */
  private writer<T extends object>(
    table: R.Table<T>,
    what?: (row: T) => string,
    cache?: BoundedCache<T | null>,
    key: (row: T) => string = () => "",
  ): (row: T) => void {
    return (row) => {
      const prev = cache?.get(key(row));
      const mask = what === undefined ? -1 : prev ? table.changed(prev, row) : table.all;
      if (mask === -1) this.run(table.insert, table.params(row));
      else if (mask !== 0) {
        const [sql, params] = table.update(row, mask);
        this.file.write(() => {
          if (this.stmt(sql).run(params).changes === 0) throw new Error(`${what!(row)} does not exist`);
        });
      }
      cache?.set(key(row), row);
    };
  }

  /** The method running query `name` (its arguments are the query's parameters, in order). */
  private many<K extends keyof typeof SQL & keyof Store>(table: R.Table<object>, name: K): Store[K] {
    return ((...args: unknown[]) => this.all(table, SQL[name], ...args)) as Store[K];
  }

  /** The same, returning the first row, through `cache` when given (`null` there: known not to exist). */
  private first<K extends keyof typeof SQL & keyof Store, T extends object>(
    table: R.Table<T>,
    name: K,
    cache?: BoundedCache<T | null>,
  ): Store[K] {
    return ((...args: unknown[]) => {
      const key = cache === undefined ? "" : args.join("\n");
      let row = cache?.get(key);
      if (row === undefined) {
        row = this.all(table, SQL[name], ...args)[0] ?? null;
        cache?.set(key, row);
      }
      return row ?? undefined;
    }) as Store[K];
  }

  // The methods that are one write or one query of a table spec (the others follow).
  readonly insertExecution = this.writer(R.EXECUTIONS, undefined, this.executions, byId);
  readonly updateExecution = this.writer(R.EXECUTIONS, (r) => `execution ${r.id}`, this.executions, byId);
  readonly getExecution = this.first(R.EXECUTIONS, "getExecution", this.executions);
  readonly findExecutionByIdempotencyKey = this.first(R.EXECUTIONS, "findExecutionByIdempotencyKey");
  readonly listSessionExecutions = this.many(R.EXECUTIONS, "listSessionExecutions");
  readonly listChildExecutions = this.many(R.EXECUTIONS, "listChildExecutions");
  readonly listExecutionsPastDeadline = this.many(R.EXECUTIONS, "listExecutionsPastDeadline");
  readonly listUnsettledSubagents = this.many(R.EXECUTIONS, "listUnsettledSubagents");
  readonly listTerminalExecutionsBefore = this.many(R.EXECUTIONS, "listTerminalExecutionsBefore");
  readonly listEvents = this.many(R.EVENTS, "listEvents");
  readonly insertStep = this.writer(R.STEPS, undefined, this.steps, stepKey);
  readonly updateStep = this.writer(R.STEPS, (r) => `step ${r.stepId}`, this.steps, stepKey);
  readonly getStep = this.first(R.STEPS, "getStep", this.steps);
  readonly listSteps = this.many(R.STEPS, "listSteps");
  readonly listFailedStepsForCall = this.many(R.STEPS, "listFailedStepsForCall");
  readonly insertDispatch = this.writer(R.DISPATCHES, undefined, this.dispatches, byId);
  private readonly putDispatch = this.writer(R.DISPATCHES, (r) => `dispatch ${r.id}`, this.dispatches, byId);
  readonly getDispatch = this.first(R.DISPATCHES, "getDispatch", this.dispatches);
  readonly listActiveDispatches = this.many(R.DISPATCHES, "listActiveDispatches");
  readonly listDueDispatches = this.many(R.DISPATCHES, "listDueDispatches");
  readonly listExpiredLeases = this.many(R.DISPATCHES, "listExpiredLeases");
  readonly insertApproval = this.writer(R.APPROVALS);
  readonly updateApproval = this.writer(R.APPROVALS, (r) => `approval ${r.id}`);
  readonly getApproval = this.first(R.APPROVALS, "getApproval");
  readonly listPendingApprovals = this.many(R.APPROVALS, "listPendingApprovals");
  readonly findPendingApprovalForStep = this.first(R.APPROVALS, "findPendingApprovalForStep");
  readonly listExpiredApprovals = this.many(R.APPROVALS, "listExpiredApprovals");
  readonly putAgent = this.writer(R.AGENTS, undefined, this.agents, byId);
  readonly getAgent = this.first(R.AGENTS, "getAgent", this.agents);
  readonly listAgents = this.many(R.AGENTS, "listAgents");
  readonly insertApiKey = this.writer(R.API_KEYS);
  readonly updateApiKey = this.writer(R.API_KEYS, (r) => `api key ${r.id}`);
  readonly getApiKey = this.first(R.API_KEYS, "getApiKey");
  readonly findApiKeyByTokenHash = this.first(R.API_KEYS, "findApiKeyByTokenHash");
  readonly listApiKeys = this.many(R.API_KEYS, "listApiKeys");
  private readonly insertResource = this.writer(R.RESOURCES);
  private readonly insertCheckpointRow = this.writer(R.CHECKPOINTS);
  readonly getResource = this.first(R.RESOURCES, "getResource");
  readonly updateCheckpoint = this.writer(R.CHECKPOINTS, (r) => `checkpoint ${r.key}#${r.seq}`);

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const [sql, args] = executionListSql(query);
    return this.all(R.EXECUTIONS, sql, ...args);
  }

  countExecutions(): number {
    return this.stmt(SQL.countExecutions, true).get() as number;
  }

  deleteExecution(id: string): void {
    this.file.write(() => {
      for (const sql of DELETE_EXECUTION) this.stmt(sql).run(id);
    });
    this.executions.set(id, null);
    this.lastSeqs.set(id, 0);
    this.noResources.set(id, true);
    // Keyed by step and dispatch: rare enough to drop them all.
    for (const cache of [this.steps, this.dispatches, this.counters]) cache.clear();
  }

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    const seq = this.lastEventSeq(executionId) + 1;
    this.run(SQL.insertEvent, executionId, seq, type, payloadJson, occurredAt);
    this.lastSeqs.set(executionId, seq);
    return seq;
  }

  lastEventSeq(executionId: string): number {
    let seq = this.lastSeqs.get(executionId);
    if (seq === undefined) {
      this.lastSeqs.set(executionId, (seq = this.stmt(SQL.lastEventSeq, true).get(executionId) as number));
    }
    return seq;
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    return this.all(R.STEPS, stepsWithStatusSql(statuses.length), executionId, ...statuses);
  }

  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined {
    const known = this.counters.get(dispatchId);
    if (known !== undefined) return known.get(`${kind}\n${target}\n${argsHash}`);
    return this.stmt(SQL.getOccurrence, true).get(dispatchId, kind, target, argsHash) as number | undefined;
  }

  setOccurrence(
    dispatchId: string,
    kind: StepKind,
    target: string,
    argsHash: string,
    consumed: number,
  ): void {
    this.run(SQL.setOccurrence, dispatchId, kind, target, argsHash, consumed);
    const known = this.counters.get(dispatchId);
    // A dispatch with that many distinct calls is read from SQLite instead: the cache stays bounded.
    if (known !== undefined && known.size >= BoundedCache.LIMIT) this.counters.delete(dispatchId);
    else known?.set(`${kind}\n${target}\n${argsHash}`, consumed);
  }

  clearOccurrences(dispatchId: string): void {
    this.run(SQL.clearOccurrences, dispatchId);
    this.counters.set(dispatchId, new Map());
  }

  updateDispatch(row: DispatchRow): void {
    this.file.write(() => {
      this.putDispatch(row);
      // No lease of an exhausted dispatch is ever live again, so nobody reads its counters.
      if (row.status === "exhausted") this.clearOccurrences(row.id);
    });
  }

  nextDispatchDueAt(): number | undefined {
    return (this.stmt(SQL.nextDue, true).get() as number | null) ?? undefined;
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    return status === undefined
      ? this.all(R.APPROVALS, SQL.allApprovals)
      : this.all(R.APPROVALS, SQL.approvalsWithStatus, status);
  }

  deleteAgent(id: string): void {
    this.run(SQL.deleteAgent, id);
    this.agents.set(id, null);
  }

  putResource(row: ResourceRow): void {
    this.insertResource(row);
    this.noResources.delete(row.executionId);
  }

  listResources(executionId: string): ResourceRow[] {
    if (this.noResources.has(executionId)) return [];
    const rows = this.all(R.RESOURCES, SQL.listResources, executionId);
    if (rows.length === 0) this.noResources.set(executionId, true);
    return rows;
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    return this.file.write(() => {
      const seq = (this.stmt(SQL.lastCheckpointSeq, true).get(row.executionId, row.key) as number) + 1;
      this.insertCheckpointRow({ ...row, seq });
      return seq;
    });
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    return key === undefined
      ? this.all(R.CHECKPOINTS, SQL.allCheckpoints, executionId)
      : this.all(R.CHECKPOINTS, SQL.keyCheckpoints, executionId, key);
  }
}

const byId = (row: { readonly id: string }): string => row.id;
const stepKey = (row: StepRow): string => `${row.executionId}\n${row.stepId}`;
