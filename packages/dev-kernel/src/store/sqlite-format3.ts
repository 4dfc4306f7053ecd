/**
 * Converting the redo-log formats (1–3) at open. Such a file held the state as JSON arrays of store
 * writes (`[method, ...args]` ops): a snapshot of the current compaction generation, a log of the
 * batches committed since, and (format 3) settled executions as bundles of ops in cold tables.
 * Replaying them in that order through the new store's write methods, inside the opening
 * transaction, rebuilds the writer's state; every row's checksum and the format-3 seal are checked
 * on the way, so a damaged file is refused (rolled back) rather than converted in part.
 */
import { hash } from "node:crypto";
import type Database from "better-sqlite3";
import { FORMAT3_TABLES } from "./sqlite-file.js";
import type { SealFile } from "./sqlite-seal.js";
import { describe, StoreCorruptError, StoreFormatError } from "./store-errors.js";
import type { Store } from "./types.js";

/** Store methods an op may name (the writes of types.ts that the redo log recorded). */
const WRITES: ReadonlySet<string> = new Set(
  `insertExecution updateExecution deleteExecution appendEvent insertStep updateStep setOccurrence
  clearOccurrences insertDispatch updateDispatch insertApproval updateApproval putAgent deleteAgent
  insertApiKey updateApiKey putResource insertCheckpoint updateCheckpoint`.split(/\s+/),
);

const sha = (text: string): string => hash("sha256", text, "hex");

class BadOpError extends Error {}

/** Apply ops: store writes, or the cold tier's `archive`, `thaw` and `deleteCold`; all checked first. */
function apply(store: Store, ops: unknown[]): void {
  for (const [index, op] of ops.entries()) {
    const method = Array.isArray(op) ? op[0] : undefined;
    if (!(method === "archive" || method === "thaw" || method === "deleteCold" || WRITES.has(method))) {
      throw new BadOpError(`op ${index} is not a known store write: ${JSON.stringify(op).slice(0, 80)}`);
    }
  }
  for (const [method, ...args] of ops as [string, ...unknown[]][]) {
    try {
      if (method === "archive") store.deleteExecution(args[0] as string);
      else if (method === "thaw") apply(store, args[1] as unknown[]);
      else if (method !== "deleteCold")
        (store as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args);
    } catch (err) {
      if (err instanceof BadOpError) throw err;
      throw new BadOpError(`a write failed: ${describe(err)}`);
    }
  }
}

/** The open connection, with what it found in a file of format 1–3 (its version and meta rows). */
export interface Format3File {
  readonly db: Database.Database;
  readonly path: string;
  readonly seal: SealFile;
  readonly converting: { readonly version: number; readonly meta: Map<string, string> } | undefined;
}

/**
 * Replay the state of a file of format 1–3 into `store` (its new tables, in the open transaction),
 * checked against its rows' sums and its seal, then drop the old tables.
 */
export function replayFormat3(store: Store, file: Format3File): void {
  const { db, path, seal } = file;
  const { version, meta } = file.converting!;
  const generation = version >= 2 ? Number(meta.get("generation")) : 1;
  const logBase = version >= 2 ? Number(meta.get("log_base")) : 0;
  const sealed = seal.readFormat3();
  let rows = 0;
  let chain = sha(`rebuno-dev-seal v1\n${generation}`);
  const lost = (what: string): StoreCorruptError => seal.lost(what, "convert it");
  const damaged = (what: string): StoreCorruptError =>
    new StoreCorruptError(
      path,
      `${path}: ${what} fails its checksum: the record changed after it was written (a damaged disk or ` +
        "an edited file). Restore the file from a backup; it was left as it is",
    );
  const replayOps = (ops: string, what: string): void => {
    try {
      apply(store, JSON.parse(ops) as unknown[]);
    } catch (err) {
      throw new StoreFormatError(path, `${path}: ${what} cannot be replayed: ${describe(err)}`, {
        cause: err,
      });
    }
  };
  const replay = (table: "snapshot" | "log", where: string, arg: number): void => {
    for (const row of pages(db, `SELECT rowid, id, ops${sums} FROM ${table} WHERE ${where}`, arg)) {
      if (version >= 2) {
        const sumGeneration = table === "log" ? 0 : generation;
        if (row.sum !== sha(`${table}\n${sumGeneration}\n${row.id}\n${row.ops}`).slice(0, 32)) {
          throw damaged(`${table} row ${row.id}`);
        }
        chain = sha(chain + row.sum);
      }
      rows++;
      if (sealed?.generation === generation && sealed.rows === rows && sealed.chain !== chain) {
        throw lost(`its first ${rows} records differ from the ones acknowledged`);
      }
      replayOps(row.ops as string, `${table} row ${row.id}`);
    }
  };
  const sums = version >= 2 ? ", sum" : "";
  store.transaction(() => {
    replay("snapshot", version >= 2 ? "generation = ?" : "? = 1", generation);
    replay("log", "id > ?", logBase);
    if (sealed !== undefined && version >= 2) {
      if (sealed.generation > generation) {
        throw lost(
          `it is at compaction generation ${generation}, but generation ${sealed.generation} was acknowledged`,
        );
      }
      if (sealed.generation === generation && rows < sealed.rows) {
        throw lost(
          `it holds ${rows} records of generation ${generation}, but ${sealed.rows} were acknowledged`,
        );
      }
    }
    if (version < 3) return;
    for (const c of pages(db, "SELECT rowid, id, row, bundle, sum FROM cold_execution WHERE ? = 0", 0)) {
      if (c.sum !== sha(`cold\n${c.id}\n${c.row}\n${c.bundle}`).slice(0, 32)) {
        throw damaged(`the cold record of execution ${c.id}`);
      }
      replayOps(c.bundle as string, `cold execution ${c.id}`);
    }
  });
  db.exec(FORMAT3_TABLES.map((table) => `DROP TABLE IF EXISTS ${table};`).join(" ")); // all but meta
}

/** The rows of `sql` by rowid, 256 at a time (no other statement may run while one iterates). */
function* pages(db: Database.Database, sql: string, arg: number): Generator<Record<string, unknown>> {
  const stmt = db.prepare(`${sql} AND rowid > ? ORDER BY rowid LIMIT 256`);
  for (let after = -1; ; ) {
    const page = stmt.all(arg, after) as Record<string, unknown>[];
    if (page.length === 0) return;
    yield* page;
    after = page[page.length - 1]!.rowid as number;
  }
}
