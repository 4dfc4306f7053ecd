/**
 * The SQLite store's cold tier: settled executions (cold-bundle.ts) live in tables of the store's
 * file instead of memory, so the kernel's memory holds the executions still in play plus a bounded
 * cache, whatever it retains.
 *
 * Tables (format version 3, sqlite-file.ts):
 * - `cold_execution`: one row per cold execution, the columns every query filters or orders by
 *   (id, agent, session, status, created/updated, idempotency key, spawning parent), the row itself
 *   as JSON (`row`, what listings return) and its bundle (`bundle`, the ops that rebuild it), with
 *   `sum` over both, checked whenever a bundle is read.
 * - `cold_dispatch (id, execution_id)`: which cold execution a dispatch id belongs to (`getDispatch`).
 * - `cold_approval`: the approvals of cold executions, with their row, for `getApproval` and
 *   `listApprovals` (none is pending: a settled execution has no pending approval).
 *
 * The tables are only written in the SQLite transaction of the log batch that records the change
 * (`archive`, `thaw`, `deleteCold` ops, redo-ops.ts), so they always hold the state after the last
 * committed batch, and replaying a log never needs them. Until its batch commits, a change lives in
 * the overlay (`added`, `removed`) that every read merges in; a store transaction that throws undoes
 * its overlay changes like the memory store undoes its own writes.
 */
import { hash } from "node:crypto";
import type Database from "better-sqlite3";
import { type ColdEntry, storeOfBundle } from "./cold-bundle.js";
import type { MemoryStore } from "./memory.js";
import { type BadOpError, type BundleOp, checkBundle } from "./redo-ops.js";
import { describe, StoreCorruptError } from "./store-errors.js";
import type { ApprovalRow, ApprovalStatus, ExecutionListQuery, ExecutionRow } from "./types.js";

/** Decoded bundles kept for reads of cold executions (a few hundred KB at most). */
export const COLD_CACHE_SIZE = 64;

function coldSum(id: string, row: string, bundle: string): string {
  return hash("sha256", `cold\n${id}\n${row}\n${bundle}`, "hex").slice(0, 32);
}

function byCreation(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

type Statement = Database.Statement<unknown[]>;

/** The cold tables of one open file, with the overlay of the batch not yet committed. */
export class ColdTier {
  /** Rows of `cold_execution` as committed. */
  private committedCount: number;
  /** Archived in the open batch: inserted when it commits. */
  private readonly added = new Map<string, ColdEntry>();
  /** Committed cold rows thawed or deleted in the open batch: deleted when it commits. */
  private readonly removed = new Set<string>();
  /** How to undo the overlay changes of the running store transaction. */
  private readonly undos: (() => void)[] = [];
  private readonly cache = new Map<string, MemoryStore>();
  private readonly statements = new Map<string, Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
  ) {
    this.committedCount = this.countRows();
  }

  private sql(text: string): Statement {
    let s = this.statements.get(text);
    if (s === undefined) {
      s = this.db.prepare(text);
      this.statements.set(text, s);
    }
    return s;
  }

  private countRows(): number {
    return this.sql("SELECT count(*) FROM cold_execution").pluck().get() as number;
  }

  // --- overlay and transactions ---------------------------------------------------------------

  /** Undo the overlay changes of the store transaction that threw. */
  undoTransaction(): void {
    for (let i = this.undos.length - 1; i >= 0; i--) this.undos[i]!();
    this.undos.length = 0;
  }

  /** The store transaction ended without throwing: its overlay changes stand. */
  endTransaction(): void {
    this.undos.length = 0;
  }

  /** Whether the open batch changes the cold tables. */
  get dirty(): boolean {
    return this.added.size > 0 || this.removed.size > 0;
  }

  /** Make an execution cold (its `archive` op is in the open batch). */
  add(entry: ColdEntry): void {
    const id = entry.row.id;
    this.added.set(id, entry);
    this.cache.delete(id);
    this.undos.push(() => this.added.delete(id));
  }

  /**
   * Take a cold execution out of the tier (thawed or deleted in the open batch) and return its
   * bundle, or undefined when it is not cold.
   */
  take(id: string): readonly BundleOp[] | undefined {
    const pending = this.added.get(id);
    if (pending !== undefined) {
      this.added.delete(id);
      this.cache.delete(id);
      this.undos.push(() => this.added.set(id, pending));
      return pending.ops;
    }
    if (this.removed.has(id)) return undefined;
    const ops = this.readBundle(id);
    if (ops === undefined) return undefined;
    this.removed.add(id);
    this.cache.delete(id);
    this.undos.push(() => this.removed.delete(id));
    return ops;
  }

  /**
   * Take a cold execution out of the tier to delete it, without reading its bundle; returns its
   * dispatch ids, or undefined when it is not cold.
   */
  drop(id: string): readonly string[] | undefined {
    const pending = this.added.get(id);
    if (pending !== undefined) {
      this.take(id);
      return pending.dispatchIds;
    }
    if (!this.has(id)) return undefined;
    const dispatchIds = this.sql("SELECT id FROM cold_dispatch WHERE execution_id = ?")
      .pluck()
      .all(id) as string[];
    this.removed.add(id);
    this.cache.delete(id);
    this.undos.push(() => this.removed.delete(id));
    return dispatchIds;
  }

  /**
   * Write the open batch's changes (inside the SQLite transaction of its log rows): deletions
   * first, since an execution thawed and archived again in one batch is in both.
   */
  flush(): void {
    for (const id of this.removed) {
      this.sql("DELETE FROM cold_execution WHERE id = ?").run(id);
      this.sql("DELETE FROM cold_dispatch WHERE execution_id = ?").run(id);
      this.sql("DELETE FROM cold_approval WHERE execution_id = ?").run(id);
    }
    for (const entry of this.added.values()) {
      const r = entry.row;
      const row = JSON.stringify(r);
      const bundle = JSON.stringify(entry.ops);
      this.sql(
        "INSERT INTO cold_execution (id, agent_id, session, status, created_at, updated_at, idempotency_key, " +
          "parent_id, row, bundle, sum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ).run(
        r.id,
        r.agentId,
        r.session ?? null,
        r.status,
        r.createdAt,
        r.updatedAt,
        r.idempotencyKey ?? null,
        r.spawnedBy?.executionId ?? null,
        row,
        bundle,
        coldSum(r.id, row, bundle),
      );
      for (const d of entry.dispatchIds) {
        this.sql("INSERT INTO cold_dispatch (id, execution_id) VALUES (?, ?)").run(d, r.id);
      }
      for (const a of entry.approvals) {
        this.sql(
          "INSERT INTO cold_approval (id, execution_id, status, created_at, row) VALUES (?, ?, ?, ?, ?)",
        ).run(a.id, a.executionId, a.status, a.createdAt, JSON.stringify(a));
      }
    }
  }

  /** The batch that {@link flush} wrote committed. */
  committed(): void {
    this.committedCount += this.added.size - this.removed.size;
    this.added.clear();
    this.removed.clear();
  }

  /** The batch failed or memory was rebuilt from the file: forget the overlay, trust the file. */
  reset(): void {
    this.added.clear();
    this.removed.clear();
    this.undos.length = 0;
    this.cache.clear();
    this.committedCount = this.countRows();
  }

  // --- reads ----------------------------------------------------------------------------------

  /** Whether the execution is cold. */
  has(id: string): boolean {
    if (this.added.has(id)) return true;
    if (this.removed.has(id)) return false;
    return this.sql("SELECT 1 FROM cold_execution WHERE id = ?").pluck().get(id) !== undefined;
  }

  count(): number {
    return this.committedCount + this.added.size - this.removed.size;
  }

  /** A store holding just the cold execution `id` (cached), or undefined when it is not cold. */
  store(id: string): MemoryStore | undefined {
    const cached = this.cache.get(id);
    if (cached !== undefined) {
      this.cache.delete(id); // most recently used last
      this.cache.set(id, cached);
      return cached;
    }
    const ops = this.added.get(id)?.ops ?? (this.removed.has(id) ? undefined : this.readBundle(id));
    if (ops === undefined) return undefined;
    const store = storeOfBundle(ops);
    this.cache.set(id, store);
    if (this.cache.size > COLD_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    return store;
  }

  execution(id: string): ExecutionRow | undefined {
    const pending = this.added.get(id);
    if (pending !== undefined) return pending.row;
    if (this.removed.has(id)) return undefined;
    const text = this.sql("SELECT row FROM cold_execution WHERE id = ?").pluck().get(id) as
      | string
      | undefined;
    return text === undefined ? undefined : this.parse<ExecutionRow>(text);
  }

  findByIdempotencyKey(agentId: string, key: string): ExecutionRow | undefined {
    for (const e of this.added.values()) {
      if (e.row.agentId === agentId && e.row.idempotencyKey === key) return e.row;
    }
    const texts = this.sql("SELECT row FROM cold_execution WHERE agent_id = ? AND idempotency_key = ?")
      .pluck()
      .all(agentId, key) as string[];
    return this.rows(texts)[0];
  }

  /** `Store.listExecutions` over the cold executions (same order and paging). */
  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const conditions: [string, unknown][] = [
      ["agent_id = ?", query.agentId],
      ["session = ?", query.session],
      ["status = ?", query.status],
      ["id < ?", query.beforeId],
    ].filter(([, v]) => v !== undefined) as [string, unknown][];
    const where = conditions.map(([c]) => c);
    const args = conditions.map(([, v]) => v);
    const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
    // Rows being removed by the open batch are skipped: ask for that many more.
    args.push(Math.min(Number.MAX_SAFE_INTEGER, query.limit + this.removed.size));
    const texts = this.sql(`SELECT row FROM cold_execution ${filter} ORDER BY id DESC LIMIT ?`)
      .pluck()
      .all(...args) as string[];
    const out = this.rows(texts);
    for (const { row } of this.added.values()) {
      if (query.agentId !== undefined && row.agentId !== query.agentId) continue;
      if (query.session !== undefined && row.session !== query.session) continue;
      if (query.status !== undefined && row.status !== query.status) continue;
      if (query.beforeId !== undefined && row.id >= query.beforeId) continue;
      out.push(row);
    }
    out.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return out.slice(0, query.limit);
  }

  /** Cold executions of the session, ascending createdAt then id. */
  listSessionExecutions(session: string): ExecutionRow[] {
    const texts = this.sql("SELECT row FROM cold_execution WHERE session = ? ORDER BY created_at, id")
      .pluck()
      .all(session) as string[];
    return this.withAdded(this.rows(texts), (r) => r.session === session);
  }

  /** Cold executions spawned by `parentId`, ascending createdAt then id. */
  listChildExecutions(parentId: string): ExecutionRow[] {
    const texts = this.sql("SELECT row FROM cold_execution WHERE parent_id = ? ORDER BY created_at, id")
      .pluck()
      .all(parentId) as string[];
    return this.withAdded(this.rows(texts), (r) => r.spawnedBy?.executionId === parentId);
  }

  /** Cold (so terminal) executions with `updatedAt < cutoff`, oldest first, at most `limit`. */
  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    const texts = this.sql(
      "SELECT row FROM cold_execution WHERE updated_at < ? ORDER BY updated_at, id LIMIT ?",
    )
      .pluck()
      .all(
        cutoff === Number.POSITIVE_INFINITY ? Number.MAX_SAFE_INTEGER : cutoff,
        Math.min(Number.MAX_SAFE_INTEGER, limit + this.removed.size),
      ) as string[];
    const out = this.rows(texts);
    for (const { row } of this.added.values()) if (row.updatedAt < cutoff) out.push(row);
    out.sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return out.slice(0, limit);
  }

  /** The cold execution a dispatch id belongs to, if any. */
  dispatchOwner(dispatchId: string): string | undefined {
    for (const e of this.added.values()) if (e.dispatchIds.includes(dispatchId)) return e.row.id;
    const owner = this.sql("SELECT execution_id FROM cold_dispatch WHERE id = ?").pluck().get(dispatchId) as
      | string
      | undefined;
    return owner === undefined || this.removed.has(owner) ? undefined : owner;
  }

  approval(id: string): ApprovalRow | undefined {
    for (const e of this.added.values()) {
      const found = e.approvals.find((a) => a.id === id);
      if (found !== undefined) return found;
    }
    const r = this.sql("SELECT execution_id, row FROM cold_approval WHERE id = ?").get(id) as
      | { execution_id: string; row: string }
      | undefined;
    return r === undefined || this.removed.has(r.execution_id) ? undefined : this.parse<ApprovalRow>(r.row);
  }

  /** Approvals of cold executions, oldest first. */
  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    const rows = (
      status === undefined
        ? this.sql("SELECT execution_id, row FROM cold_approval ORDER BY created_at, rowid").all()
        : this.sql(
            "SELECT execution_id, row FROM cold_approval WHERE status = ? ORDER BY created_at, rowid",
          ).all(status)
    ) as { execution_id: string; row: string }[];
    const out: ApprovalRow[] = [];
    for (const r of rows) if (!this.removed.has(r.execution_id)) out.push(this.parse<ApprovalRow>(r.row));
    for (const e of this.added.values()) {
      for (const a of e.approvals) if (status === undefined || a.status === status) out.push(a);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt); // stable: ties keep their order
  }

  // --- decoding -------------------------------------------------------------------------------

  private rows(texts: readonly string[]): ExecutionRow[] {
    const out: ExecutionRow[] = [];
    for (const text of texts) {
      const row = this.parse<ExecutionRow>(text);
      if (!this.removed.has(row.id)) out.push(row);
    }
    return out;
  }

  private withAdded(rows: ExecutionRow[], match: (r: ExecutionRow) => boolean): ExecutionRow[] {
    const before = rows.length;
    for (const { row } of this.added.values()) if (match(row)) rows.push(row);
    return rows.length > before ? rows.sort(byCreation) : rows;
  }

  private parse<T>(text: string): T {
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw this.damaged(`a cold row is not JSON (${describe(err)})`);
    }
  }

  /** The bundle of a committed cold execution, checked against its sum. */
  private readBundle(id: string): BundleOp[] | undefined {
    const r = this.sql("SELECT row, bundle, sum FROM cold_execution WHERE id = ?").get(id) as
      | { row: string; bundle: string; sum: string }
      | undefined;
    if (r === undefined) return undefined;
    if (r.sum !== coldSum(id, r.row, r.bundle)) {
      throw this.damaged(`the cold record of execution ${id} fails its checksum`);
    }
    const ops: unknown = this.parse(r.bundle);
    try {
      checkBundle(ops);
    } catch (err) {
      throw this.damaged(
        `the cold record of execution ${id} is not a bundle (${(err as BadOpError).message})`,
      );
    }
    return ops;
  }

  private damaged(what: string): StoreCorruptError {
    return new StoreCorruptError(
      this.path,
      `${this.path} is damaged: ${what}. Restore the file from a backup; it was left as it is`,
    );
  }
}
