/**
 * Reading the redo-log formats (1–3) that rebuno-dev wrote before the plain tables, to convert such
 * a file at open (sqlite-connection.ts). Such a file held the state as JSON arrays of store writes
 * ("ops", `[method, ...args]`): a snapshot of the current compaction generation, a log of the
 * batches committed since its base, and (format 3) settled executions as bundles of insert ops in
 * cold tables. Replaying them into a {@link MemoryStore}, in that order, rebuilds the state the
 * writer had; every row's checksum and the format-3 seal (what was acknowledged) are checked first,
 * so a damaged file is refused rather than converted in part.
 */
import { hash } from "node:crypto";
import type Database from "better-sqlite3";
import { MemoryStore } from "./memory.js";
import { readMeta } from "./sqlite-file.js";
import type { SealFile } from "./sqlite-seal.js";
import { describe, StoreCorruptError, StoreFormatError } from "./store-errors.js";
import type { Store } from "./types.js";

/** Store methods an op may name (the writes of types.ts that the redo log recorded). */
const WRITES: ReadonlySet<string> = new Set([
  "insertExecution",
  "updateExecution",
  "deleteExecution",
  "appendEvent",
  "insertStep",
  "updateStep",
  "setOccurrence",
  "clearOccurrences",
  "insertDispatch",
  "updateDispatch",
  "insertApproval",
  "updateApproval",
  "putAgent",
  "deleteAgent",
  "insertApiKey",
  "updateApiKey",
  "putResource",
  "insertCheckpoint",
  "updateCheckpoint",
]);

const sha = (text: string): string => hash("sha256", text, "hex");

/** Why a stored op could not be applied. */
class BadOpError extends Error {}

/** Apply one op: a store write, or the cold tier's `archive` (left memory), `thaw` (came back), `deleteCold`. */
function apply(memory: MemoryStore, op: unknown, index: number): void {
  const method = Array.isArray(op) ? op[0] : undefined;
  const known = method === "archive" || method === "thaw" || method === "deleteCold" || WRITES.has(method);
  if (!known || typeof method !== "string") {
    throw new BadOpError(`op ${index} is not a known store write: ${JSON.stringify(op).slice(0, 80)}`);
  }
  const args = (op as unknown[]).slice(1);
  try {
    if (method === "archive") memory.deleteExecution(args[0] as string);
    else if (method === "thaw")
      for (const [i, inner] of (args[1] as unknown[]).entries()) apply(memory, inner, i);
    else if (method !== "deleteCold")
      (memory as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args);
  } catch (err) {
    if (err instanceof BadOpError) throw err;
    throw new BadOpError(`a write failed: ${describe(err)}`);
  }
}

/**
 * The state a file of format `version` (1–3) holds, checked against its rows' sums and its seal.
 * Reads only; the caller holds the file's write lock.
 */
export function readFormat3(
  db: Database.Database,
  path: string,
  version: number,
  seal: SealFile,
): MemoryStore {
  const meta = readMeta(db);
  const generation = version >= 2 ? Number(meta.get("generation")) : 1;
  const logBase = version >= 2 ? Number(meta.get("log_base")) : 0;
  const sealed = seal.readFormat3();
  const memory = new MemoryStore();
  let rows = 0;
  let chain = sha(`rebuno-dev-seal v1\n${generation}`);
  const lost = (what: string): StoreCorruptError =>
    new StoreCorruptError(
      path,
      `${path} holds less than the kernel acknowledged (${what}; see ${seal.path}): the end of its WAL is ` +
        "damaged or missing, or an older copy of the file was put in its place. Refusing to convert it " +
        `rather than silently undo acknowledged work: restore it from a backup, or delete ${seal.path} ` +
        "to accept what the file holds",
    );
  const replayOps = (ops: string, what: string): void => {
    try {
      for (const [i, op] of (JSON.parse(ops) as unknown[]).entries()) apply(memory, op, i);
    } catch (err) {
      throw new StoreFormatError(path, `${path}: ${what} cannot be replayed: ${describe(err)}`, {
        cause: err,
      });
    }
  };
  const replay = (table: "snapshot" | "log", sql: string, arg: number): void => {
    for (const row of db.prepare(sql).iterate(arg) as Iterable<{ id: number; ops: string; sum?: string }>) {
      if (version >= 2) {
        const sumGeneration = table === "log" ? 0 : generation;
        if (row.sum !== sha(`${table}\n${sumGeneration}\n${row.id}\n${row.ops}`).slice(0, 32)) {
          throw new StoreCorruptError(
            path,
            `${path}: ${table} row ${row.id} fails its checksum: the record changed after it was ` +
              "written (a damaged disk or an edited file). Restore the file from a backup; it was left as it is",
          );
        }
        chain = sha(chain + row.sum);
      }
      rows++;
      if (sealed?.generation === generation && sealed.rows === rows && sealed.chain !== chain) {
        throw lost(`its first ${rows} records differ from the ones acknowledged`);
      }
      replayOps(row.ops, `${table} row ${row.id}`);
    }
  };
  const sums = version >= 2 ? ", sum" : "";
  replay(
    "snapshot",
    `SELECT id, ops${sums} FROM snapshot WHERE ${version >= 2 ? "generation = ?" : "? = 1"} ORDER BY id`,
    generation,
  );
  replay("log", `SELECT id, ops${sums} FROM log WHERE id > ? ORDER BY id`, logBase);
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
  if (version >= 3) {
    const cold = db
      .prepare("SELECT id, row, bundle, sum FROM cold_execution ORDER BY rowid")
      .iterate() as Iterable<{
      id: string;
      row: string;
      bundle: string;
      sum: string;
    }>;
    for (const c of cold) {
      if (c.sum !== sha(`cold\n${c.id}\n${c.row}\n${c.bundle}`).slice(0, 32)) {
        throw new StoreCorruptError(path, `${path}: the cold record of execution ${c.id} fails its checksum`);
      }
      replayOps(c.bundle, `cold execution ${c.id}`);
    }
  }
  return memory;
}

/** The tables of formats 1–3, dropped once their state is in the plain tables. */
export const FORMAT3_DROP = `
DROP TABLE IF EXISTS snapshot; DROP TABLE IF EXISTS log; DROP TABLE IF EXISTS cold_execution;
DROP TABLE IF EXISTS cold_dispatch; DROP TABLE IF EXISTS cold_approval; DROP TABLE meta;`;

/**
 * Write a converted file's state into `store` (the plain tables), in one transaction. Checkpoints go
 * in their insertion order, which gives each key the same seqs again.
 */
export function copyInto(store: Store, memory: MemoryStore): void {
  const c = memory.contents();
  store.transaction(() => {
    for (const row of c.executions) store.insertExecution(row);
    for (const log of c.eventLogs) {
      for (const e of log) store.appendEvent(e.executionId, e.type, e.payloadJson, e.occurredAt);
    }
    for (const row of c.steps) store.insertStep(row);
    for (const row of c.dispatches) store.insertDispatch(row);
    for (const o of c.occurrences)
      store.setOccurrence(o.dispatchId, o.kind, o.target, o.argsHash, o.consumed);
    for (const row of c.approvals) store.insertApproval(row);
    for (const row of c.agents) store.putAgent(row);
    for (const row of c.apiKeys) store.insertApiKey(row);
    for (const row of c.resources) store.putResource(row);
    for (const row of c.checkpoints) store.insertCheckpoint(row);
  });
}
