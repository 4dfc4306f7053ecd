/**
 * Compaction of the SQLite store, written a row at a time so that it never stops the kernel from
 * serving: a snapshot of a large state is tens of MB of JSON and as many MB of SQLite writes,
 * seconds of blocked event loop if done at once.
 *
 * The state to write is fixed when compaction starts, when memory holds exactly what the file
 * holds (`snapshotOps` copies the tables by reference: rows are immutable values). The snapshot rows of the next generation are then encoded and inserted
 * one per event-loop turn, each in its own small SQLite transaction, between the kernel's own
 * batches; those batches go on being appended to the log meanwhile. The switch is one small
 * transaction (`meta.generation` + 1, `meta.log_base` = the last log row the snapshot includes);
 * the old generation's snapshot rows and the log rows up to the base are garbage from then on,
 * ignored by loading, and deleted a few rows per turn. A crash at any point leaves either the old
 * generation (plus garbage) or the new one (plus garbage): both load to the same state.
 */
import type Database from "better-sqlite3";
import { encodeOps, type RedoOp } from "./redo-ops.js";
import { chainNext, chainStart, rowSum } from "./sqlite-seal.js";

/**
 * Characters per snapshot row written in one turn: bounds the time one turn spends encoding,
 * hashing and inserting (≈ 2–4 ms at 256 Ki characters).
 */
export const COMPACTION_ROW_CHARS = 256 << 10;

/** Rows of garbage deleted per turn once a compaction is done. */
export const GARBAGE_ROWS_PER_TURN = 16;

/** One compaction in progress (see the module comment). */
export class PendingSnapshot {
  /** Characters and rows written so far, and the chain over their sums. */
  chars = 0;
  rows = 0;
  chain: string;
  /** Sums of the log rows appended since the start: the new generation's chain includes them. */
  readonly logSums: string[] = [];
  private readonly texts: Generator<string>;
  private readonly insert: Database.Statement<[number, number, string, string]>;
  private nextId: number;

  constructor(
    private readonly db: Database.Database,
    ops: Iterable<RedoOp>,
    /** The generation being written. */
    readonly generation: number,
    /** The last log row the snapshot includes. */
    readonly logBase: number,
  ) {
    this.chain = chainStart(generation);
    this.texts = encodeOps(ops, COMPACTION_ROW_CHARS);
    this.insert = db.prepare("INSERT INTO snapshot (id, generation, ops, sum) VALUES (?, ?, ?, ?)");
    const max = db.prepare("SELECT max(id) FROM snapshot").pluck().get() as number | null;
    this.nextId = (max ?? 0) + 1;
  }

  /** Write the next row (its own transaction); false once every row is written. */
  step(): boolean {
    const next = this.texts.next();
    if (next.done === true) return false;
    const id = this.nextId;
    const sum = rowSum("snapshot", this.generation, id, next.value);
    this.insert.run(id, this.generation, next.value, sum);
    this.nextId = id + 1;
    this.chain = chainNext(this.chain, sum);
    this.rows++;
    this.chars += next.value.length;
    return true;
  }

  /** Make this generation the current one (one transaction). */
  switchTo(): void {
    const set = this.db.prepare("UPDATE meta SET value = ? WHERE key = ?");
    this.db.transaction(() => {
      set.run(String(this.generation), "generation");
      set.run(String(this.logBase), "log_base");
    })();
  }
}

/**
 * Delete up to `limit` garbage rows: snapshot rows of other generations than `generation`, log rows
 * up to `logBase`. Returns whether any are left.
 */
export function deleteGarbage(
  db: Database.Database,
  generation: number,
  logBase: number,
  limit: number,
): boolean {
  const snapshot = db
    .prepare(
      "DELETE FROM snapshot WHERE id IN (SELECT id FROM snapshot WHERE generation <> ? ORDER BY id LIMIT ?)",
    )
    .run(generation, limit).changes;
  const log = db
    .prepare("DELETE FROM log WHERE id IN (SELECT id FROM log WHERE id <= ? ORDER BY id LIMIT ?)")
    .run(logBase, limit).changes;
  return snapshot === limit || log === limit;
}
