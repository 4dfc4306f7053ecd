/**
 * The SQLite store's file before and around SQLite: creating a new store atomically, refusing an
 * existing file that is not one (empty, not a regular file), telling a read-only file from an I/O
 * error, and mapping what SQLite reports to the store's typed errors.
 *
 * A store file only ever comes into being complete: it is built under a temporary name and linked
 * into place, so an existing file without the store's tables (a zero-length file, another
 * application's empty database) is never taken for a new store and silently written over.
 */
import { randomBytes } from "node:crypto";
import { accessSync, constants, linkSync, lstatSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { openSqliteDatabase } from "./sqlite-driver.js";
import { rowSum } from "./sqlite-seal.js";
import {
  describe,
  StoreCorruptError,
  StoreError,
  StoreFormatError,
  StoreLockedError,
  StoreReadOnlyError,
} from "./store-errors.js";

/** Value of `meta.format`: tells our files from other SQLite databases. */
export const FORMAT_NAME = "rebuno-dev-redo-log";
/**
 * Value of `meta.version` this code writes; it refuses files with a higher one. Version 2 added a
 * checksum to every row, the compaction generation of snapshot rows and the log base (sqlite-log.ts,
 * sqlite-compaction.ts). Version 3 added the cold tables (cold-tier.ts) and the `archive`, `thaw`
 * and `deleteCold` ops; older files are upgraded at open (1 → 2 → 3), which only adds to them.
 */
export const FORMAT_VERSION = 3;

/** The cold tables (cold-tier.ts; added by format version 3). */
export const COLD_TABLES = ["cold_execution", "cold_dispatch", "cold_approval"] as const;

/** DDL of the cold tables and their indexes. */
export const COLD_SCHEMA = `
CREATE TABLE cold_execution (id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, session TEXT, status TEXT NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, idempotency_key TEXT, parent_id TEXT,
  row TEXT NOT NULL, bundle TEXT NOT NULL, sum TEXT NOT NULL);
CREATE INDEX cold_execution_agent ON cold_execution (agent_id, id);
CREATE INDEX cold_execution_status ON cold_execution (status, id);
CREATE INDEX cold_execution_session ON cold_execution (session, created_at, id) WHERE session IS NOT NULL;
CREATE INDEX cold_execution_parent ON cold_execution (parent_id, created_at, id) WHERE parent_id IS NOT NULL;
CREATE INDEX cold_execution_updated ON cold_execution (updated_at, id);
CREATE INDEX cold_execution_key ON cold_execution (agent_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE TABLE cold_dispatch (id TEXT PRIMARY KEY, execution_id TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX cold_dispatch_execution ON cold_dispatch (execution_id);
CREATE TABLE cold_approval (id TEXT PRIMARY KEY, execution_id TEXT NOT NULL, status TEXT NOT NULL,
  created_at INTEGER NOT NULL, row TEXT NOT NULL);
CREATE INDEX cold_approval_execution ON cold_approval (execution_id);
CREATE INDEX cold_approval_created ON cold_approval (created_at);
`;

/** Tables of the dev kernel's previous, normalized SQLite schema (before the redo log). */
const OLD_SCHEMA_TABLES = ["executions", "events", "steps", "dispatches", "occurrences"];

/** Tables and meta rows of a new store (format {@link FORMAT_VERSION}). */
const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE snapshot (id INTEGER PRIMARY KEY, generation INTEGER NOT NULL, ops TEXT NOT NULL, sum TEXT NOT NULL);
CREATE TABLE log (id INTEGER PRIMARY KEY, ops TEXT NOT NULL, sum TEXT NOT NULL);
${COLD_SCHEMA}
INSERT INTO meta (key, value) VALUES
  ('format', '${FORMAT_NAME}'), ('version', '${FORMAT_VERSION}'), ('generation', '1'), ('log_base', '0');
`;

const READ_ONLY_CODES = new Set(["EACCES", "EPERM", "EROFS"]);

/**
 * Make sure `path` can be opened as a store: create it when it does not exist, else check that it
 * is a non-empty regular file this process may write, together with its directory and side files.
 * Returns whether it was created.
 */
export function prepareStoreFile(path: string, nativeBinding: string | undefined): boolean {
  let size: number;
  try {
    const stat = lstatSync(path);
    if (!stat.isFile()) {
      throw new StoreFormatError(path, `${path} is not a regular file: point --store at a file path`);
    }
    size = stat.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw asStoreError(path, err);
    checkWritable(path, [[dirname(path), "its directory"]]);
    if (createStoreFile(path, nativeBinding)) return true;
    size = lstatSync(path).size; // created by someone else meanwhile: check it like any other
  }
  if (size === 0) {
    throw new StoreFormatError(
      path,
      `${path} is empty (0 bytes), so it is not a store rebuno-dev wrote (a new store is created ` +
        "complete, never empty): delete it to start an empty store there, or point --store at another path",
    );
  }
  checkWritable(path, [
    [path, "the file"],
    [dirname(path), "its directory"],
    [`${path}-wal`, "its WAL"],
    [`${path}-seal`, "its seal file"],
  ]);
  return false;
}

/**
 * Refuse with {@link StoreReadOnlyError} unless this process may write every existing one of
 * `paths`. `access` asks about the process's real rights (root may write a 0444 file, and does).
 */
function checkWritable(path: string, paths: readonly (readonly [string, string])[]): void {
  for (const [p, what] of paths) {
    try {
      accessSync(p, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      if (code === "ENOENT" && p !== path && p !== dirname(path)) continue; // side file not there yet
      if (!READ_ONLY_CODES.has(code)) throw asStoreError(path, err);
      throw new StoreReadOnlyError(
        path,
        `${path} is read-only for this process: ${what}${p === path ? "" : ` (${p})`} cannot be written ` +
          `(${code}), and the store writes every change there. Make it writable, or point --store at ` +
          "another path",
        { cause: err },
      );
    }
  }
}

/** Build a new store under a temporary name and link it into place; false if `path` appeared meanwhile. */
function createStoreFile(path: string, nativeBinding: string | undefined): boolean {
  const temp = `${path}.new-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const db = openSqliteDatabase(path, temp, nativeBinding);
    try {
      db.pragma("journal_mode = WAL"); // what every open expects; kept in the file's header
      db.pragma("synchronous = FULL");
      db.exec(SCHEMA); // complete on disk when it returns; closing checkpoints it into the file
    } finally {
      db.close();
    }
    try {
      linkSync(temp, path); // unlike rename, never replaces a file created meanwhile
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
    return true;
  } catch (err) {
    throw asStoreError(path, err, "create");
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // Never created (the error being thrown says why), or already gone.
    }
  }
}

function asStoreError(path: string, err: unknown, doing = "open"): StoreError {
  if (StoreError.isInstance(err)) return err;
  const code = (err as NodeJS.ErrnoException).code ?? "";
  if (READ_ONLY_CODES.has(code) || code === "SQLITE_READONLY" || code === "SQLITE_CANTOPEN") {
    if (READ_ONLY_CODES.has(code) || !writable(dirname(path))) {
      return new StoreReadOnlyError(
        path,
        `cannot ${doing} ${path}: its directory is read-only (${describe(err)})`,
        {
          cause: err,
        },
      );
    }
  }
  return new StoreError(path, `cannot ${doing} ${path}: ${describe(err)}`, { cause: err });
}

function writable(p: string): boolean {
  try {
    accessSync(p, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A store error saying the file is not a rebuno-dev store, and why. */
export function notOurs(path: string, why: string): StoreFormatError {
  return new StoreFormatError(
    path,
    `${path} is not a rebuno-dev store (${why}): point --store at a new path or at a file rebuno-dev created`,
  );
}

/** Map what SQLite said while opening or reading the file to the store's typed errors. */
export function classifySqliteError(path: string, err: unknown, doing: "open" | "read"): StoreError {
  if (StoreError.isInstance(err)) return err;
  const code = String((err as { code?: unknown }).code ?? "");
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return new StoreLockedError(path, { cause: err });
  if (code === "SQLITE_NOTADB") {
    return new StoreFormatError(path, `${path} is not an SQLite database (${describe(err)})`, { cause: err });
  }
  if (code.startsWith("SQLITE_CORRUPT")) {
    return new StoreCorruptError(
      path,
      `${path} is damaged: SQLite reports ${describe(err)}; restore it from a backup`,
      { cause: err },
    );
  }
  if (code.startsWith("SQLITE_READONLY")) {
    return new StoreReadOnlyError(path, `${path} is read-only for this process (${describe(err)})`, {
      cause: err,
    });
  }
  return new StoreError(path, `cannot ${doing} ${path}: ${describe(err)}`, { cause: err });
}

/** The `meta` table as a map. */
export function readMeta(db: Database.Database): Map<string, string> {
  const rows = db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[];
  return new Map(rows.map((r) => [r.key, r.value]));
}

/** Check (reading only) that the file is ours and not newer; returns its format version. */
export function checkFormat(db: Database.Database, path: string): number {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  if (!tables.includes("meta")) {
    if (tables.length > 0 && OLD_SCHEMA_TABLES.every((t) => tables.includes(t))) {
      throw new StoreFormatError(
        path,
        `${path} holds the dev kernel's old SQLite schema (tables executions, steps, events…), ` +
          "which this version no longer reads: delete the file (and its -wal/-shm files) to start " +
          "empty, or point --store at another path",
      );
    }
    throw notOurs(path, tables.length === 0 ? "it holds no tables" : `it holds tables ${tables.join(", ")}`);
  }
  const meta = readMeta(db);
  if (meta.get("format") !== FORMAT_NAME) throw notOurs(path, `its format is ${meta.get("format")}`);
  const version = Number(meta.get("version"));
  if (!Number.isInteger(version) || version < 1) {
    throw new StoreFormatError(path, `${path} has an invalid format version ${meta.get("version")}`);
  }
  if (version > FORMAT_VERSION) {
    throw new StoreFormatError(
      path,
      `${path} was written by a newer rebuno-dev (format version ${version}; this one reads up to ` +
        `${FORMAT_VERSION}): upgrade @rebuno/dev-kernel, or point --store at another path`,
    );
  }
  const expected = version >= 3 ? ["snapshot", "log", ...COLD_TABLES] : ["snapshot", "log"];
  for (const t of expected) {
    if (!tables.includes(t)) throw new StoreFormatError(path, `${path} lacks its ${t} table`);
  }
  return version;
}

/** SQLite's own structural check of every page (not of row contents: those have their sums). */
export function runQuickCheck(db: Database.Database, path: string): void {
  const found = db.pragma("quick_check(5)", { simple: false }) as { quick_check: string }[];
  const problems = found.map((r) => r.quick_check).filter((p) => p !== "ok");
  if (problems.length > 0) {
    throw new StoreCorruptError(
      path,
      `${path} is damaged: SQLite's quick_check reports ${problems.join("; ")}. Restore it from a ` +
        "backup; the file was left as it is",
    );
  }
}

/** Format 1 had no sums: add them (trusting its rows as they are) and start generation 1. */
export function upgradeFromVersion1(db: Database.Database): void {
  db.exec("ALTER TABLE snapshot ADD COLUMN generation INTEGER NOT NULL DEFAULT 1");
  for (const table of ["snapshot", "log"] as const) {
    db.exec(`ALTER TABLE ${table} ADD COLUMN sum TEXT`);
    const ids = db.prepare(`SELECT id FROM ${table} ORDER BY id`).pluck().all() as number[];
    const read = db.prepare(`SELECT ops FROM ${table} WHERE id = ?`).pluck();
    const write = db.prepare(`UPDATE ${table} SET sum = ? WHERE id = ?`);
    for (const id of ids) write.run(rowSum(table, table === "log" ? 0 : 1, id, read.get(id) as string), id);
  }
  db.exec(
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', '1'), ('log_base', '0'), ('version', '2')",
  );
}

/**
 * Format 2 kept every execution in memory: add the (empty) cold tables. The executions its
 * snapshot and log hold load into memory as before, and the running store moves the settled ones
 * out as it does with any other (cold-tier.ts).
 */
export function upgradeFromVersion2(db: Database.Database): void {
  db.exec(COLD_SCHEMA);
  db.exec("UPDATE meta SET value = '3' WHERE key = 'version'");
}
